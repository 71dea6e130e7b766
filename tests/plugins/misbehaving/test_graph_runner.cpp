// Good graph_runner for the host's tests: loads only over a backend with the CUDA extension.
#include "test_plugins.hpp"

static const plinth_graph_runner_vtable kTable =
    plinth::sdk::graph_runner_vtable<plinth_test::TestGraphRunner>();
PLINTH_PLUGIN("test_graph_runner", "0.1.0", PLINTH_KIND_GRAPH_RUNNER, "graph_runner for host tests",
              nullptr, &kTable)
