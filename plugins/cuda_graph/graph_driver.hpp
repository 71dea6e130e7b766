// cuda_graph — the few graph operations the runner needs, behind an interface so the runner's
// logic (graph_runner.hpp) stays free of CUDA headers and is tested on the CPU with a fake.
// cuda_driver.cpp implements it with the CUDA runtime (stream capture, cudaGraphInstantiate,
// cudaGraphLaunch); tests implement it by running the enqueue function on launch.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>

namespace plinth::cuda_graph {

/// Device memory as the driver sees it, bytes.
struct DeviceMemory {
  uint64_t free_bytes = 0;        ///< cudaMemGetInfo's free memory
  uint64_t graph_pool_bytes = 0;  ///< cudaGraphMemAttrUsedMemCurrent (graph allocations)
};

/// Captures and replays graphs on one stream. Graphs are identified by the index capture()
/// returns and live until the driver is destroyed. Every method throws std::runtime_error with
/// the CUDA error's name and text on failure. One thread at a time.
class GraphDriver {
 public:
  virtual ~GraphDriver() = default;
  /// Records what `enqueue` puts on `stream` (it must only enqueue: no synchronisation, no
  /// allocation) into a graph, instantiates it and returns its index.
  virtual uint32_t capture(void* stream, const std::function<void()>& enqueue) = 0;
  /// Launches graph `graph` on `stream` (asynchronously).
  virtual void launch(uint32_t graph, void* stream) = 0;
  virtual DeviceMemory memory() = 0;
};

/// The CUDA runtime driver (cuda_driver.cpp); only in builds with CUDA.
std::unique_ptr<GraphDriver> make_cuda_driver();

}  // namespace plinth::cuda_graph
