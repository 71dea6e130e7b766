// Test plugin (graph_runner): cuda_graph's GraphRunner (its config, padding, can_run rules and
// lazy/eager capture) over the host graph driver of tests/plugins/cuda_graph/host_stream.hpp
// instead of the CUDA runtime: a "graph" is the recording of what forward_static enqueued during
// capture, and a launch runs that recording. The published config schema is cuda_graph's.
#include <plinth/graph_runner.hpp>

#include "graph_config.hpp"
#include "graph_runner.hpp"
#include "host_stream.hpp"

namespace {

class HostGraphRunner : public plinth::cuda_graph::GraphRunner {
 public:
  explicit HostGraphRunner(const plinth_create_args& args)
      : GraphRunner(args, std::make_unique<plinth::cuda_graph::testing::HostGraphDriver>()) {}
};

const plinth_graph_runner_vtable kTable = plinth::sdk::graph_runner_vtable<HostGraphRunner>();

}  // namespace

PLINTH_PLUGIN("host_graph_runner", "0.1.0", PLINTH_KIND_GRAPH_RUNNER,
              "test: cuda_graph's runner over a host-emulated stream and graph driver",
              plinth::cuda_graph::kConfigSchema, &kTable)
