// CUDA runtime helpers of backend_cuda: errors as plinth::sdk::Error, and RAII owners of device
// and pinned host memory. Host code (g++), CUDA runtime API only.
#pragma once

#include <cublas_v2.h>
#include <cuda_runtime_api.h>

#include <cstddef>
#include <string>
#include <utility>

#include "plinth/plugin.hpp"

namespace plinth::cuda {

/// Throws sdk::Error when `e` is not cudaSuccess: OUT_OF_MEMORY for cudaErrorMemoryAllocation,
/// INTERNAL otherwise; the message is "backend_cuda: <what>: <cudaGetErrorName>: <string>".
inline void check(cudaError_t e, const std::string& what) {
  if (e == cudaSuccess) return;
  const plinth_status st =
      e == cudaErrorMemoryAllocation ? PLINTH_ERR_OUT_OF_MEMORY : PLINTH_ERR_INTERNAL;
  throw sdk::Error(
      st, "backend_cuda: " + what + ": " + cudaGetErrorName(e) + ": " + cudaGetErrorString(e));
}

/// Throws sdk::Error(INTERNAL) naming `what` and the cuBLAS status when `s` is not SUCCESS.
inline void check_blas(cublasStatus_t s, const std::string& what) {
  if (s == CUBLAS_STATUS_SUCCESS) return;
  throw sdk::Error(PLINTH_ERR_INTERNAL, "backend_cuda: " + what + ": cuBLAS status " +
                                            std::to_string(static_cast<int>(s)));
}

/// Device memory (cudaMalloc), freed on destruction. Move-only.
class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  /// Allocates `bytes` (0: nothing); throws via check() naming `what`.
  DeviceBuffer(size_t bytes, const std::string& what) : bytes_(bytes) {
    if (bytes > 0)
      check(cudaMalloc(&ptr_, bytes),
            "cudaMalloc " + what + " (" + std::to_string(bytes) + " bytes)");
  }
  DeviceBuffer(DeviceBuffer&& o) noexcept
      : ptr_(std::exchange(o.ptr_, nullptr)), bytes_(std::exchange(o.bytes_, 0)) {}
  DeviceBuffer& operator=(DeviceBuffer&& o) noexcept {
    if (this != &o) {
      reset();
      ptr_ = std::exchange(o.ptr_, nullptr);
      bytes_ = std::exchange(o.bytes_, 0);
    }
    return *this;
  }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  ~DeviceBuffer() { reset(); }

  void reset() noexcept {
    if (ptr_ != nullptr) cudaFree(ptr_);
    ptr_ = nullptr;
    bytes_ = 0;
  }
  template <class T>
  T* as() const {
    return static_cast<T*>(ptr_);
  }
  size_t bytes() const { return bytes_; }

 private:
  void* ptr_ = nullptr;
  size_t bytes_ = 0;
};

/// Page-locked host memory (cudaHostAlloc), so cudaMemcpyAsync is truly asynchronous. Move-only.
class PinnedBuffer {
 public:
  PinnedBuffer() = default;
  PinnedBuffer(size_t bytes, const std::string& what) : bytes_(bytes) {
    if (bytes > 0) {
      check(cudaHostAlloc(&ptr_, bytes, cudaHostAllocDefault),
            "cudaHostAlloc " + what + " (" + std::to_string(bytes) + " bytes)");
    }
  }
  PinnedBuffer(PinnedBuffer&& o) noexcept
      : ptr_(std::exchange(o.ptr_, nullptr)), bytes_(std::exchange(o.bytes_, 0)) {}
  PinnedBuffer& operator=(PinnedBuffer&& o) noexcept {
    if (this != &o) {
      reset();
      ptr_ = std::exchange(o.ptr_, nullptr);
      bytes_ = std::exchange(o.bytes_, 0);
    }
    return *this;
  }
  PinnedBuffer(const PinnedBuffer&) = delete;
  PinnedBuffer& operator=(const PinnedBuffer&) = delete;
  ~PinnedBuffer() { reset(); }

  void reset() noexcept {
    if (ptr_ != nullptr) cudaFreeHost(ptr_);
    ptr_ = nullptr;
    bytes_ = 0;
  }
  template <class T>
  T* as() const {
    return static_cast<T*>(ptr_);
  }
  size_t bytes() const { return bytes_; }

 private:
  void* ptr_ = nullptr;
  size_t bytes_ = 0;
};

}  // namespace plinth::cuda
