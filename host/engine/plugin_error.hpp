#pragma once
// Turning a plugin call's status + plinth_error into an exception at the host side.

#include <stdexcept>
#include <string>

#include "plinth/abi.h"

namespace plinth {

/// A plugin call failed. what(): "<call>: <plugin's message>"; status() the plinth_status.
class PluginError : public std::runtime_error {
 public:
  PluginError(int32_t status, const std::string& message)
      : std::runtime_error(message), status_(status) {}
  int32_t status() const { return status_; }

 private:
  int32_t status_;
};

/// A fresh error object to pass to a plugin call.
inline plinth_error make_error() {
  plinth_error e{};
  e.struct_size = sizeof(plinth_error);
  return e;
}

/// Throws PluginError naming `call` (e.g. "kv_cache.get_info") when status is not PLINTH_OK.
inline void check_status(int32_t status, const plinth_error& err, const char* call) {
  if (status == PLINTH_OK) return;
  std::string msg = err.message[0] != '\0' ? err.message : "failed without a message";
  throw PluginError(status, std::string(call) + ": " + msg);
}

}  // namespace plinth
