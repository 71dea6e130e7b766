#include "runtime/host_context.hpp"

#include "runtime/logging.hpp"

namespace plinth {

namespace {

HostContext& ctx_of(void* ctx) {
  return *static_cast<HostContext*>(ctx);
}

spdlog::level::level_enum to_spdlog(int32_t level) {
  switch (level) {
    case PLINTH_LOG_TRACE:
      return spdlog::level::trace;
    case PLINTH_LOG_DEBUG:
      return spdlog::level::debug;
    case PLINTH_LOG_INFO:
      return spdlog::level::info;
    case PLINTH_LOG_WARN:
      return spdlog::level::warn;
    default:
      return spdlog::level::err;
  }
}

// The C entry points of plinth_host_api: nothing may throw out of them.
void api_log(void* ctx, int32_t level, const char* plugin, const char* message) noexcept {
  try {
    ctx_of(ctx).logger().log(to_spdlog(level), "[{}] {}", plugin != nullptr ? plugin : "?",
                             message != nullptr ? message : "");
  } catch (...) {
  }
}
int32_t api_log_enabled(void* ctx, int32_t level) noexcept {
  return ctx_of(ctx).logger().should_log(to_spdlog(level)) ? 1 : 0;
}
int64_t api_metric_register(void* ctx, const char* name, const char* help, int32_t type) noexcept {
  try {
    if (name == nullptr) return -1;
    return ctx_of(ctx).metrics().register_metric(name, help != nullptr ? help : "", type);
  } catch (...) {
    return -1;
  }
}
void api_metric_set(void* ctx, int64_t id, double v) noexcept {
  ctx_of(ctx).metrics().set(id, v);
}
void api_metric_add(void* ctx, int64_t id, double v) noexcept {
  ctx_of(ctx).metrics().add(id, v);
}
void api_metric_observe(void* ctx, int64_t id, double v) noexcept {
  try {
    ctx_of(ctx).metrics().observe(id, v);
  } catch (...) {
  }
}

}  // namespace

HostContext::HostContext(std::shared_ptr<spdlog::logger> logger)
    : logger_(logger != nullptr ? std::move(logger) : make_stderr_logger(spdlog::level::info)) {
  api_.struct_size = sizeof(plinth_host_api);
  api_.abi_major = PLINTH_ABI_MAJOR;
  api_.abi_minor = PLINTH_ABI_MINOR;
  api_.ctx = this;
  api_.log = api_log;
  api_.log_enabled = api_log_enabled;
  api_.metric_register = api_metric_register;
  api_.metric_set = api_metric_set;
  api_.metric_add = api_metric_add;
  api_.metric_observe = api_metric_observe;
}

}  // namespace plinth
