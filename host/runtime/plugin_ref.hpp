#pragma once
// The host's one reference to a plugin instance: its kind's table and the instance, as the
// Pipeline (runtime/pipeline.hpp) created them and the Engine (engine/engine_plugins.hpp) drives
// them. The SDK's C structs `plinth_backend_ref` / `plinth_kv_cache_ref` /
// `plinth_prefix_cache_ref` (sdk/include/plinth/plugin.h) are the same pair as the ABI passes it
// to create(); to_c() converts explicitly.

#include "plinth/plinth.h"

namespace plinth {

/// A plugin's table and instance, borrowed: the Pipeline owns the instance (and the library the
/// table lives in), destroys it, and must outlive every copy of the ref. Both null when the kind
/// is absent (or not created yet). Copyable and trivially cheap; no thread rules of its own (the
/// plugin's kind header says which calls may run concurrently).
template <class VTable>
struct PluginRef {
  const VTable* vtable = nullptr;
  plinth_instance* instance = nullptr;
  /// True when the instance exists (the kind is present and created).
  explicit operator bool() const { return instance != nullptr; }
};
using BackendRef = PluginRef<plinth_backend_vtable>;
using KvCacheRef = PluginRef<plinth_kv_cache_vtable>;
using PrefixCacheRef = PluginRef<plinth_prefix_cache_vtable>;
using SchedulerRef = PluginRef<plinth_scheduler_vtable>;
using SpeculatorRef = PluginRef<plinth_speculator_vtable>;
using GraphRunnerRef = PluginRef<plinth_graph_runner_vtable>;
using GrammarRef = PluginRef<plinth_grammar_vtable>;

/// The ABI's C struct of the same pair, for plinth_create_args (plugin.h); borrowed like `r`.
inline plinth_backend_ref to_c(const BackendRef& r) {
  return {r.vtable, r.instance};
}
/// The ABI's C struct of the same pair, for plinth_create_args (plugin.h); borrowed like `r`.
inline plinth_kv_cache_ref to_c(const KvCacheRef& r) {
  return {r.vtable, r.instance};
}
/// The ABI's C struct of the same pair, for plinth_create_args (plugin.h); borrowed like `r`.
inline plinth_prefix_cache_ref to_c(const PrefixCacheRef& r) {
  return {r.vtable, r.instance};
}

}  // namespace plinth
