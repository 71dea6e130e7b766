// Test fakes shared by the kv_paged and scheduler_continuous tests: a backend that only answers
// get_kv_layout / get_memory_info (what kv_paged needs at create), and a host API recording metric
// values and log lines.
#pragma once

#include <plinth/backend.h>
#include <plinth/host_api.h>
#include <plinth/kv_cache.h>

#include <cstdio>
#include <map>
#include <string>
#include <vector>

namespace plinth::test {

/// A backend instance whose layout and memory the test chooses.
struct FakeBackend {
  uint64_t bytes_per_token = 1024;
  int32_t device_kind = PLINTH_DEVICE_CPU;
  uint64_t free_bytes = 64ull << 20;
  int32_t fail_status = 0;  // non-zero: get_kv_layout fails with it

  static int32_t get_kv_layout(plinth_instance* inst, plinth_kv_layout* out, plinth_error* err) {
    auto* self = reinterpret_cast<FakeBackend*>(inst);
    if (self->fail_status != 0) {
      if (err != nullptr) {
        err->status = self->fail_status;
        std::snprintf(err->message, sizeof(err->message), "fake backend failure");
      }
      return self->fail_status;
    }
    out->struct_size = sizeof(*out);
    out->bytes_per_token = self->bytes_per_token;
    out->n_layers = 1;
    out->n_kv_heads = 1;
    out->head_dim = 1;
    out->dtype = 0;
    return PLINTH_OK;
  }
  static int32_t get_memory_info(plinth_instance* inst, plinth_memory_info* out, plinth_error*) {
    auto* self = reinterpret_cast<FakeBackend*>(inst);
    out->struct_size = sizeof(*out);
    out->device_kind = self->device_kind;
    out->free_bytes = self->free_bytes;
    out->total_bytes = self->free_bytes * 2;
    return PLINTH_OK;
  }
  static const plinth_backend_vtable* vtable() {
    static const plinth_backend_vtable v = [] {
      plinth_backend_vtable t{};
      t.struct_size = sizeof(t);
      t.get_kv_layout = &FakeBackend::get_kv_layout;
      t.get_memory_info = &FakeBackend::get_memory_info;
      return t;
    }();
    return &v;
  }
  plinth_backend_ref ref() { return {vtable(), reinterpret_cast<plinth_instance*>(this)}; }
};

/// A host API that records metrics by name and log lines.
struct FakeHost {
  std::map<std::string, double> values;
  std::vector<std::string> names;  // by id
  std::vector<std::string> logs;
  plinth_host_api api{};

  FakeHost() {
    api.struct_size = sizeof(api);
    api.abi_major = PLINTH_ABI_MAJOR;
    api.abi_minor = PLINTH_ABI_MINOR;
    api.ctx = this;
    api.log = [](void* ctx, int32_t, const char* plugin, const char* msg) {
      static_cast<FakeHost*>(ctx)->logs.push_back(std::string(plugin) + ": " + msg);
    };
    api.log_enabled = [](void*, int32_t) -> int32_t { return 1; };
    api.metric_register = [](void* ctx, const char* name, const char*, int32_t) -> int64_t {
      auto* h = static_cast<FakeHost*>(ctx);
      for (size_t i = 0; i < h->names.size(); ++i) {
        if (h->names[i] == name) return static_cast<int64_t>(i);
      }
      h->names.emplace_back(name);
      return static_cast<int64_t>(h->names.size() - 1);
    };
    api.metric_set = [](void* ctx, int64_t id, double v) {
      auto* h = static_cast<FakeHost*>(ctx);
      h->values[h->names.at(static_cast<size_t>(id))] = v;
    };
    api.metric_add = [](void* ctx, int64_t id, double v) {
      auto* h = static_cast<FakeHost*>(ctx);
      h->values[h->names.at(static_cast<size_t>(id))] += v;
    };
    api.metric_observe = [](void*, int64_t, double) {};
  }
};

/// Create args for a kv_cache wired to `backend`.
inline plinth_create_args kv_args(FakeHost& host, FakeBackend& backend, const char* config) {
  plinth_create_args a{};
  a.struct_size = sizeof(a);
  a.host = &host.api;
  a.instance_name = "kv_paged";
  a.config_json = config;
  a.backend = backend.ref();
  return a;
}

}  // namespace plinth::test
