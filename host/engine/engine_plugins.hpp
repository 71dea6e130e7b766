#pragma once
// The plugin instances one Engine drives, as the host wired them (see runtime/pipeline.hpp).

#include <string>

#include "plinth/plinth.h"

namespace plinth {

class PluginHostApi;

/// Refs (table + instance) of the pipeline's plugins. Owned by the pipeline, which must outlive
/// the engine. Optional kinds have a NULL vtable when absent.
struct EnginePlugins {
  plinth_backend_ref backend{};
  plinth_kv_cache_ref kv_cache{};
  const plinth_scheduler_vtable* scheduler_vtable = nullptr;
  plinth_instance* scheduler = nullptr;
  plinth_prefix_cache_ref prefix_cache{};
  /// The speculator (NULL vtable: none) and the ABI minor its library declares: the host passes
  /// array structs at that minor's stride and uses 1.2 functions only when present.
  const plinth_speculator_vtable* speculator_vtable = nullptr;
  plinth_instance* speculator = nullptr;
  uint32_t speculator_abi_minor = 0;
  /// The graph runner (NULL vtable: none): forward() replays the decode-only batches its can_run
  /// accepts, and the backend runs the rest.
  const plinth_graph_runner_vtable* graph_runner_vtable = nullptr;
  plinth_instance* graph_runner = nullptr;
  /// The host API table the plugins received; the engine answers its get_seq. NULL (tests with
  /// hand-wired plugins) = plugins cannot look sequences up.
  PluginHostApi* host_api = nullptr;
  /// The ABI minor the scheduler's library declares: scheduler.update gets its results at that
  /// minor's stride (scheduler.h). The default suits plugins wired by hand in tests.
  uint32_t scheduler_abi_minor = PLINTH_ABI_MINOR;
  /// The plugins' names (the manifest's `name`, by default the library's short name such as
  /// "kv_paged"): the errors of a plugin that breaks its contract name it
  /// (engine/contract_check.hpp). The defaults suit plugins wired by hand in tests.
  struct Names {
    std::string backend = "backend", kv_cache = "kv_cache", scheduler = "scheduler",
                graph_runner = "graph_runner";
  } names;
};

}  // namespace plinth
