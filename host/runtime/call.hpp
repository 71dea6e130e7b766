#pragma once
// Calling plugin functions from C++: a non-OK plinth_status with its plinth_error becomes a
// PluginCallError naming the plugin and the function.
//   plinth_error err = plinth::make_error();
//   plinth::check(kv.vtable->allocate(kv.instance, seq, n, copies, 1, &nc, &err), err,
//                 "kv_paged.allocate");
// or, with the error object handled for you:
//   plinth::call("kv_paged.get_info", [&](plinth_error* e) { return
//   kv.vtable->get_info(kv.instance, &info, e); });

#include <stdexcept>
#include <string>
#include <string_view>

#include "plinth/abi.h"

namespace plinth {

/// "OK", "INVALID_ARGUMENT", ... ("STATUS_<n>" for unknown values).
std::string status_name(int32_t status);

/// A plugin function returned an error. what() is "<function> failed: <STATUS>: <message>".
class PluginCallError : public std::runtime_error {
 public:
  PluginCallError(std::string function, int32_t status, const std::string& message);
  const std::string& function() const { return function_; }
  int32_t status() const { return status_; }

 private:
  std::string function_;
  int32_t status_;
};

/// An empty error object to pass to a plugin function.
inline plinth_error make_error() {
  plinth_error e{};
  e.struct_size = sizeof(plinth_error);
  e.status = PLINTH_OK;
  return e;
}

/// The plugin's message, or "(no message)" when it wrote none.
std::string error_message(const plinth_error& err);

/// Throws PluginCallError when status != PLINTH_OK. `function` names it: "<plugin>.<function>".
inline void check(int32_t status, const plinth_error& err, std::string_view function) {
  if (status != PLINTH_OK) throw PluginCallError(std::string(function), status, error_message(err));
}

/// Calls f(plinth_error*) -> int32_t status, and checks it.
template <class F>
void call(std::string_view function, F&& f) {
  plinth_error err = make_error();
  check(static_cast<int32_t>(f(&err)), err, function);
}

}  // namespace plinth
