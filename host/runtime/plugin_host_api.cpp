#include "runtime/plugin_host_api.hpp"

namespace plinth {

PluginHostApi::PluginHostApi(HostContext& host) : shared_(host.api()) {
  api_.struct_size = sizeof(plinth_host_api);
  api_.abi_major = PLINTH_ABI_MAJOR;
  api_.abi_minor = PLINTH_ABI_MINOR;
  api_.ctx = this;
  api_.log = [](void* c, int32_t level, const char* plugin, const char* message) noexcept {
    const plinth_host_api& s = shared(c);
    s.log(s.ctx, level, plugin, message);
  };
  api_.log_enabled = [](void* c, int32_t level) noexcept {
    const plinth_host_api& s = shared(c);
    return s.log_enabled(s.ctx, level);
  };
  api_.metric_register = [](void* c, const char* name, const char* help, int32_t type) noexcept {
    const plinth_host_api& s = shared(c);
    return s.metric_register(s.ctx, name, help, type);
  };
  api_.metric_set = [](void* c, int64_t id, double v) noexcept {
    const plinth_host_api& s = shared(c);
    s.metric_set(s.ctx, id, v);
  };
  api_.metric_add = [](void* c, int64_t id, double v) noexcept {
    const plinth_host_api& s = shared(c);
    s.metric_add(s.ctx, id, v);
  };
  api_.metric_observe = [](void* c, int64_t id, double v) noexcept {
    const plinth_host_api& s = shared(c);
    s.metric_observe(s.ctx, id, v);
  };
  api_.get_seq = [](void* c, plinth_seq_id seq, plinth_seq_view* out) noexcept -> int32_t {
    try {
      const SeqLookup& lookup = static_cast<PluginHostApi*>(c)->lookup_;
      if (out == nullptr || !lookup) return PLINTH_ERR_NOT_FOUND;
      return lookup(seq, out);
    } catch (...) {
      return PLINTH_ERR_INTERNAL;
    }
  };
}

const plinth_host_api& PluginHostApi::shared(void* ctx) {
  return *static_cast<PluginHostApi*>(ctx)->shared_;
}

}  // namespace plinth
