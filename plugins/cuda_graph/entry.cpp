// cuda_graph — the plugin library's one exported symbol: the graph_runner table over GraphRunner
// with the CUDA runtime driver.
#include <plinth/graph_runner.hpp>

#include "graph_config.hpp"
#include "graph_driver.hpp"
#include "graph_runner.hpp"

namespace {

class CudaGraphRunner : public plinth::cuda_graph::GraphRunner {
 public:
  explicit CudaGraphRunner(const plinth_create_args& args)
      : GraphRunner(args, plinth::cuda_graph::make_cuda_driver()) {}
};

const plinth_graph_runner_vtable kTable = plinth::sdk::graph_runner_vtable<CudaGraphRunner>();

}  // namespace

PLINTH_PLUGIN("cuda_graph", "0.1.0", PLINTH_KIND_GRAPH_RUNNER,
              "CUDA Graph runner: replays decode steps captured per batch size (lazy by default), "
              "padding a batch to the next captured size",
              plinth::cuda_graph::kConfigSchema, &kTable)
