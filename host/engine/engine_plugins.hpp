#pragma once
// The plugin instances one Engine drives, as the host wired them (see runtime/pipeline.hpp).

#include <string>

#include "plinth/plinth.h"
#include "runtime/plugin_ref.hpp"

namespace plinth {

class PluginHostApi;

/// Refs (table + instance, runtime/plugin_ref.hpp) of the pipeline's plugins, borrowed: the
/// pipeline owns the instances and must outlive the engine. Optional kinds (prefix_cache,
/// speculator, graph_runner) have a null ref when absent.
struct EnginePlugins {
  BackendRef backend;
  KvCacheRef kv_cache;
  SchedulerRef scheduler;
  PrefixCacheRef prefix_cache;
  /// The speculator (null: none) and the ABI minor its library declares: the host passes array
  /// structs at that minor's stride and uses 1.2 functions only when present.
  SpeculatorRef speculator;
  uint32_t speculator_abi_minor = 0;
  /// The graph runner (null: none): forward() replays the decode-only batches its can_run
  /// accepts, and the backend runs the rest.
  GraphRunnerRef graph_runner;
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
                graph_runner = "graph_runner", speculator = "speculator";
  } names;
};

}  // namespace plinth
