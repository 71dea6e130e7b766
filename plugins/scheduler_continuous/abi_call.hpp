// scheduler_continuous — calling another plugin's C table: a fresh plinth_error, and a failed
// status turned into plinth::sdk::Error naming the callee and the call.
#pragma once

#include <plinth/plugin.hpp>

#include <string>

namespace plinth::scheduler_continuous {

inline plinth_error new_error() {
  plinth_error e{};
  e.struct_size = sizeof(e);
  return e;
}

/// Throws sdk::Error "scheduler_continuous: <callee> <what> failed: <message>" unless OK.
inline void check(int32_t status, const plinth_error& err, const char* callee, const char* what) {
  if (status != PLINTH_OK) {
    throw sdk::Error(
        static_cast<plinth_status>(status),
        std::string("scheduler_continuous: ") + callee + " " + what + " failed: " + err.message);
  }
}

}  // namespace plinth::scheduler_continuous
