// plinth SDK — header-only C++ helpers for plugin authors: exceptions converted into status codes
// at the boundary, the host's logger and metrics as a small class, the entry-symbol macro, and the
// lifecycle table generated from an ordinary C++ class. Kind adapters live in plinth/<kind>.hpp.
//
// A plugin class T is constructed from the create arguments and destroyed by destroy:
//   class MyCache { public: explicit MyCache(const plinth_create_args& args); ... };
// Anything T throws from its constructor or methods becomes a plinth_error: plinth::sdk::Error
// keeps its status, std::invalid_argument becomes INVALID_ARGUMENT, std::bad_alloc OUT_OF_MEMORY,
// anything else INTERNAL.
#pragma once

#include <cstdio>
#include <cstring>
#include <new>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>

#include "plinth/plinth.h"

namespace plinth::sdk {

/// An error carrying a plinth_status; thrown inside a plugin, converted at the boundary.
class Error : public std::runtime_error {
 public:
  Error(plinth_status status, const std::string& message)
      : std::runtime_error(message), status_(status) {}
  plinth_status status() const noexcept { return status_; }

 private:
  plinth_status status_;
};

/// A plinth_error to pass to a function of another plugin's C table: struct_size set, status
/// PLINTH_OK, message empty.
inline plinth_error new_error() noexcept {
  plinth_error e{};
  e.struct_size = sizeof(e);
  return e;
}

/// Calling another plugin, its error turned into ours: after a call into another plugin's C table
/// that returned `status` and filled `err` (new_error()), throws Error(status, "<context> failed:
/// <err.message>") unless status is PLINTH_OK, so the callee's status and message travel on as
/// this plugin's error (guard() converts it back at this plugin's boundary). `context` names the
/// caller and the call, e.g. "kv_paged: backend get_kv_layout".
inline void check_call(int32_t status, const plinth_error& err, std::string_view context) {
  if (status == PLINTH_OK) return;
  throw Error(static_cast<plinth_status>(status),
              std::string(context) + " failed: " + std::string(err.message));
}

/// Writes status and message into `err` (NULL allowed); returns status as int32_t.
inline int32_t set_error(plinth_error* err, plinth_status status,
                         std::string_view message) noexcept {
  if (err != nullptr) {
    err->struct_size = sizeof(plinth_error);
    err->status = status;
    size_t n = message.size() < PLINTH_ERROR_MESSAGE_CAPACITY - 1
                   ? message.size()
                   : PLINTH_ERROR_MESSAGE_CAPACITY - 1;
    std::memcpy(err->message, message.data(), n);
    err->message[n] = '\0';
  }
  return status;
}

/// Runs `f` (returning void) and converts any exception into a status + message in `err`.
template <class F>
int32_t guard(plinth_error* err, F&& f) noexcept {
  try {
    std::forward<F>(f)();
    return PLINTH_OK;
  } catch (const Error& e) {
    return set_error(err, e.status(), e.what());
  } catch (const std::invalid_argument& e) {
    return set_error(err, PLINTH_ERR_INVALID_ARGUMENT, e.what());
  } catch (const std::bad_alloc&) {
    return set_error(err, PLINTH_ERR_OUT_OF_MEMORY, "out of memory");
  } catch (const std::exception& e) {
    return set_error(err, PLINTH_ERR_INTERNAL, e.what());
  } catch (...) {
    return set_error(err, PLINTH_ERR_INTERNAL, "unknown exception");
  }
}

/// The host API as a C++ object. Cheap to copy; valid while the instance lives. Thread-safe.
class Host {
 public:
  Host() = default;
  Host(const plinth_host_api* api, std::string plugin) : api_(api), plugin_(std::move(plugin)) {}

  void log(plinth_log_level level, const std::string& message) const {
    if (api_ != nullptr && api_->log != nullptr)
      api_->log(api_->ctx, level, plugin_.c_str(), message.c_str());
  }
  bool log_enabled(plinth_log_level level) const {
    return api_ != nullptr && api_->log_enabled != nullptr &&
           api_->log_enabled(api_->ctx, level) != 0;
  }
  void debug(const std::string& m) const { log(PLINTH_LOG_DEBUG, m); }
  void info(const std::string& m) const { log(PLINTH_LOG_INFO, m); }
  void warn(const std::string& m) const { log(PLINTH_LOG_WARN, m); }

  /// Registers a metric; returns its id or -1 (no host, invalid name).
  int64_t metric(const char* name, const char* help, plinth_metric_type type) const {
    if (api_ == nullptr || api_->metric_register == nullptr) return -1;
    return api_->metric_register(api_->ctx, name, help, type);
  }
  void set(int64_t id, double v) const {
    if (id >= 0 && api_->metric_set != nullptr) api_->metric_set(api_->ctx, id, v);
  }
  void add(int64_t id, double v) const {
    if (id >= 0 && api_->metric_add != nullptr) api_->metric_add(api_->ctx, id, v);
  }
  void observe(int64_t id, double v) const {
    if (id >= 0 && api_->metric_observe != nullptr) api_->metric_observe(api_->ctx, id, v);
  }

 private:
  const plinth_host_api* api_ = nullptr;
  std::string plugin_;
};

/// Writes `value` into a caller-owned out-struct that may be older (smaller) than S: copies
/// min(out->struct_size, sizeof(S)) bytes and sets struct_size to what was written, so a caller
/// built against an earlier minor never has its buffer overrun. out->struct_size == 0 (a caller
/// that did not say) is read as sizeof(S), the 1.0 behaviour.
template <class S>
void write_out(S* out, const S& value) noexcept {
  const size_t have = out->struct_size == 0 ? sizeof(S) : out->struct_size;
  const size_t n = have < sizeof(S) ? have : sizeof(S);
  S copy = value;
  copy.struct_size = static_cast<uint32_t>(n);
  std::memcpy(static_cast<void*>(out), &copy, n);
}

/// Casts an instance handle back to the plugin's class.
template <class T>
T& self(plinth_instance* inst) {
  return *reinterpret_cast<T*>(inst);
}

namespace detail {
template <class T>
concept HasExtension = requires(T& t, const char* n) {
  { t.extension(n) } -> std::convertible_to<const void*>;
};
}  // namespace detail

/// The lifecycle table for class T: create = new T(args), destroy = delete. When T has
/// `const void* extension(const char* name)`, it answers get_extension.
template <class T>
constexpr plinth_lifecycle lifecycle() {
  plinth_lifecycle l{};
  l.struct_size = sizeof(plinth_lifecycle);
  l.create = [](const plinth_create_args* args, plinth_instance** out,
                plinth_error* err) -> int32_t {
    if (args == nullptr || out == nullptr) {
      return set_error(err, PLINTH_ERR_INVALID_ARGUMENT, "create: args and out must not be NULL");
    }
    return guard(err, [&] { *out = reinterpret_cast<plinth_instance*>(new T(*args)); });
  };
  l.destroy = [](plinth_instance* inst) { delete reinterpret_cast<T*>(inst); };
  if constexpr (detail::HasExtension<T>) {
    l.get_extension = [](plinth_instance* inst, const char* name) -> const void* {
      try {
        return self<T>(inst).extension(name);
      } catch (...) {
        return nullptr;
      }
    };
  } else {
    l.get_extension = nullptr;
  }
  return l;
}

}  // namespace plinth::sdk

/// Defines the plugin's one exported symbol. `vtable` is the address of a static kind table.
///   static const plinth_kv_cache_vtable kTable = plinth::sdk::kv_cache_vtable<MyCache>();
///   PLINTH_PLUGIN("kv_paged", "0.1.0", PLINTH_KIND_KV_CACHE, "paged KV cache", kSchema, &kTable)
#define PLINTH_PLUGIN(name_, version_, kind_, description_, schema_, vtable_)             \
  extern "C" PLINTH_EXPORT const plinth_plugin_descriptor* plinth_plugin_entry(void) {    \
    static const plinth_plugin_descriptor descriptor = {sizeof(plinth_plugin_descriptor), \
                                                        PLINTH_ABI_MAJOR,                 \
                                                        PLINTH_ABI_MINOR,                 \
                                                        (name_),                          \
                                                        (version_),                       \
                                                        (kind_),                          \
                                                        (description_),                   \
                                                        (schema_),                        \
                                                        (vtable_)};                       \
    return &descriptor;                                                                   \
  }
