#include "runtime/call.hpp"

#include <cstring>

namespace plinth {

std::string status_name(int32_t status) {
  switch (status) {
    case PLINTH_OK:
      return "OK";
    case PLINTH_ERR_INVALID_ARGUMENT:
      return "INVALID_ARGUMENT";
    case PLINTH_ERR_OUT_OF_MEMORY:
      return "OUT_OF_MEMORY";
    case PLINTH_ERR_NO_CAPACITY:
      return "NO_CAPACITY";
    case PLINTH_ERR_NOT_FOUND:
      return "NOT_FOUND";
    case PLINTH_ERR_UNSUPPORTED:
      return "UNSUPPORTED";
    case PLINTH_ERR_INTERNAL:
      return "INTERNAL";
    default:
      return "STATUS_" + std::to_string(status);
  }
}

std::string error_message(const plinth_error& err) {
  // Bounded: a plugin may have left the buffer without a terminator.
  size_t n = strnlen(err.message, PLINTH_ERROR_MESSAGE_CAPACITY);
  return n == 0 ? std::string("(no message)") : std::string(err.message, n);
}

PluginCallError::PluginCallError(std::string function, int32_t status, const std::string& message)
    : std::runtime_error(function + " failed: " + status_name(status) + ": " + message),
      function_(std::move(function)),
      status_(status) {}

}  // namespace plinth
