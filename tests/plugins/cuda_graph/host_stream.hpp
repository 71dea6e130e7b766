// Test support: a CUDA stream and graph driver emulated on the host, for running cuda_graph's
// GraphRunner without a GPU. Work enqueued on a HostStream runs at once, except while the stream
// is being captured: then it is recorded instead (as a CUDA stream under capture records kernels
// without running them), and HostGraphDriver::launch replays the recording. A backend's
// forward_static that read the per-call batch instead of its static buffers, or did its work
// outside the enqueue, therefore gives stale results on replay, as it would on the GPU.
#pragma once

#include <functional>
#include <stdexcept>
#include <utility>
#include <vector>

#include "graph_driver.hpp"

namespace plinth::cuda_graph::testing {

struct HostStream {
  bool capturing = false;
  std::vector<std::function<void()>> recorded;
  /// Runs `op` now, or records it while capturing.
  void enqueue(std::function<void()> op) {
    if (capturing) {
      recorded.push_back(std::move(op));
    } else {
      op();
    }
  }
};

class HostGraphDriver final : public GraphDriver {
 public:
  uint32_t capture(void* stream, const std::function<void()>& enqueue) override {
    auto* s = static_cast<HostStream*>(stream);
    if (s->capturing) throw std::runtime_error("host stream: capture inside a capture");
    s->capturing = true;
    s->recorded.clear();
    try {
      enqueue();
    } catch (...) {
      s->capturing = false;
      s->recorded.clear();
      throw;
    }
    s->capturing = false;
    graphs_.push_back(std::move(s->recorded));
    s->recorded.clear();
    num_captures_++;
    return static_cast<uint32_t>(graphs_.size() - 1);
  }
  void launch(uint32_t graph, void* stream) override {
    if (static_cast<HostStream*>(stream)->capturing) {
      throw std::runtime_error("host stream: launch while capturing");
    }
    for (const auto& op : graphs_.at(graph)) op();
    num_launches_++;
  }
  DeviceMemory memory() override { return {}; }

  uint32_t num_captures() const { return num_captures_; }
  uint32_t num_launches() const { return num_launches_; }

 private:
  std::vector<std::vector<std::function<void()>>> graphs_;
  uint32_t num_captures_ = 0, num_launches_ = 0;
};

}  // namespace plinth::cuda_graph::testing
