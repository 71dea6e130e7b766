// cuda_graph — GraphDriver over the CUDA runtime: stream capture (cudaStreamBeginCapture in
// thread-local mode, so an unsafe call such as a synchronisation inside forward_static fails the
// capture instead of silently running), cudaGraphInstantiate, cudaGraphLaunch
// (CUDA Programming Guide, "CUDA Graphs": stream capture).
#include <cuda_runtime.h>

#include <stdexcept>
#include <string>
#include <vector>

#include "graph_driver.hpp"

namespace plinth::cuda_graph {
namespace {

void cuda_check(cudaError_t e, const char* what) {
  if (e != cudaSuccess) {
    throw std::runtime_error(std::string("cuda_graph: ") + what + ": " + cudaGetErrorName(e) +
                             ": " + cudaGetErrorString(e));
  }
}

class CudaDriver final : public GraphDriver {
 public:
  ~CudaDriver() override {
    for (cudaGraphExec_t g : execs_) cudaGraphExecDestroy(g);
    for (cudaGraph_t g : graphs_) cudaGraphDestroy(g);
  }

  uint32_t capture(void* stream, const std::function<void()>& enqueue) override {
    auto s = static_cast<cudaStream_t>(stream);
    cuda_check(cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal),
               "cudaStreamBeginCapture");
    cudaGraph_t graph = nullptr;
    try {
      enqueue();
    } catch (...) {
      cudaStreamEndCapture(s, &graph);  // ends the capture; the partial graph is dropped
      if (graph != nullptr) cudaGraphDestroy(graph);
      throw;
    }
    cuda_check(cudaStreamEndCapture(s, &graph), "cudaStreamEndCapture");
    cudaGraphExec_t exec = nullptr;
    const cudaError_t e = cudaGraphInstantiate(&exec, graph, 0);
    if (e != cudaSuccess) {
      cudaGraphDestroy(graph);
      cuda_check(e, "cudaGraphInstantiate");
    }
    // Uploading now moves the first launch's setup cost out of the first replayed step.
    cuda_check(cudaGraphUpload(exec, s), "cudaGraphUpload");
    graphs_.push_back(graph);
    execs_.push_back(exec);
    return static_cast<uint32_t>(execs_.size() - 1);
  }

  void launch(uint32_t graph, void* stream) override {
    if (graph >= execs_.size()) throw std::logic_error("cuda_graph: unknown graph index");
    cuda_check(cudaGraphLaunch(execs_[graph], static_cast<cudaStream_t>(stream)),
               "cudaGraphLaunch");
  }

  DeviceMemory memory() override {
    DeviceMemory m;
    size_t free_bytes = 0, total = 0;
    cuda_check(cudaMemGetInfo(&free_bytes, &total), "cudaMemGetInfo");
    m.free_bytes = free_bytes;
    int device = 0;
    cuda_check(cudaGetDevice(&device), "cudaGetDevice");
    unsigned long long used = 0;  // NOLINT(runtime/int): the attribute's documented type
    cuda_check(cudaDeviceGetGraphMemAttribute(device, cudaGraphMemAttrUsedMemCurrent, &used),
               "cudaDeviceGetGraphMemAttribute");
    m.graph_pool_bytes = used;
    return m;
  }

 private:
  std::vector<cudaGraph_t> graphs_;
  std::vector<cudaGraphExec_t> execs_;
};

}  // namespace

std::unique_ptr<GraphDriver> make_cuda_driver() {
  return std::make_unique<CudaDriver>();
}

}  // namespace plinth::cuda_graph
