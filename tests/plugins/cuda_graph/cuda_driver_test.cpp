// cuda_graph's CUDA runtime driver (cuda_driver.cpp) on a GPU: work enqueued during capture does
// not run until the graph is launched, each launch runs it again, a throwing enqueue leaves the
// stream usable (the capture ended), and memory() reads the device. Without a CUDA device every
// test skips with the reason.
#include <gtest/gtest.h>

#include <cuda_runtime.h>

#include <stdexcept>
#include <string>

#include "graph_driver.hpp"

namespace plinth::cuda_graph {
namespace {

class CudaDriverTest : public ::testing::Test {
 protected:
  void SetUp() override {
    int n = 0;
    const cudaError_t e = cudaGetDeviceCount(&n);
    if (e != cudaSuccess || n == 0) {
      GTEST_SKIP() << "no CUDA device (" << cudaGetErrorName(e) << "): GPU test skipped";
    }
    ASSERT_EQ(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking), cudaSuccess);
    ASSERT_EQ(cudaMalloc(&buf_, sizeof(int)), cudaSuccess);
    ASSERT_EQ(cudaMemset(buf_, 0, sizeof(int)), cudaSuccess);
  }
  void TearDown() override {
    if (buf_ != nullptr) cudaFree(buf_);
    if (stream_ != nullptr) cudaStreamDestroy(stream_);
  }
  int read() {
    int v = -1;
    EXPECT_EQ(cudaMemcpyAsync(&v, buf_, sizeof(int), cudaMemcpyDeviceToHost, stream_), cudaSuccess);
    EXPECT_EQ(cudaStreamSynchronize(stream_), cudaSuccess);
    return v;
  }
  cudaStream_t stream_ = nullptr;
  int* buf_ = nullptr;
};

TEST_F(CudaDriverTest, CapturedWorkRunsOnlyOnLaunch) {
  auto driver = make_cuda_driver();
  const DeviceMemory before = driver->memory();
  EXPECT_GT(before.free_bytes, 0u);
  const uint32_t g = driver->capture(
      stream_, [&] { ASSERT_EQ(cudaMemsetAsync(buf_, 0x11, sizeof(int), stream_), cudaSuccess); });
  EXPECT_EQ(read(), 0) << "capturing must not run the work";
  driver->launch(g, stream_);
  EXPECT_EQ(read(), 0x11111111);
  ASSERT_EQ(cudaMemsetAsync(buf_, 0, sizeof(int), stream_), cudaSuccess);
  driver->launch(g, stream_);
  EXPECT_EQ(read(), 0x11111111) << "every launch runs the graph again";
  EXPECT_THROW(driver->launch(g + 1, stream_), std::logic_error);
}

TEST_F(CudaDriverTest, AFailedEnqueueEndsTheCapture) {
  auto driver = make_cuda_driver();
  EXPECT_THROW(driver->capture(stream_, [] { throw std::runtime_error("enqueue failed"); }),
               std::runtime_error);
  cudaStreamCaptureStatus status = cudaStreamCaptureStatusActive;
  ASSERT_EQ(cudaStreamIsCapturing(stream_, &status), cudaSuccess);
  EXPECT_EQ(status, cudaStreamCaptureStatusNone);
  // The stream still works, and a later capture succeeds.
  const uint32_t g = driver->capture(
      stream_, [&] { ASSERT_EQ(cudaMemsetAsync(buf_, 0x22, sizeof(int), stream_), cudaSuccess); });
  driver->launch(g, stream_);
  EXPECT_EQ(read(), 0x22222222);
}

TEST_F(CudaDriverTest, ASynchronisationInsideTheCaptureFails) {
  auto driver = make_cuda_driver();
  // forward_static must only enqueue: a stream synchronisation during capture is illegal, and
  // the driver reports it instead of recording a broken graph.
  EXPECT_THROW(driver->capture(stream_,
                               [&] {
                                 if (cudaStreamSynchronize(stream_) != cudaSuccess) {
                                   throw std::runtime_error("synchronise refused in capture");
                                 }
                               }),
               std::runtime_error);
  cudaGetLastError();  // clear the (non-sticky) error the refused call left
}

}  // namespace
}  // namespace plinth::cuda_graph
