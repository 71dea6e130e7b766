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

/// How a CudaBuffer allocates and frees: device memory (cudaMalloc) or page-locked host memory
/// (cudaHostAlloc, so cudaMemcpyAsync is truly asynchronous).
struct DeviceMemory {
  static constexpr const char* kAlloc = "cudaMalloc";
  static cudaError_t allocate(void** p, size_t bytes) { return cudaMalloc(p, bytes); }
  static void release(void* p) { cudaFree(p); }
};
struct PinnedMemory {
  static constexpr const char* kAlloc = "cudaHostAlloc";
  static cudaError_t allocate(void** p, size_t bytes) {
    return cudaHostAlloc(p, bytes, cudaHostAllocDefault);
  }
  static void release(void* p) { cudaFreeHost(p); }
};

/// `bytes` of memory of kind `Memory` (DeviceMemory or PinnedMemory), freed on destruction.
/// Move-only; not thread-safe.
template <class Memory>
class CudaBuffer {
 public:
  CudaBuffer() = default;
  /// Allocates `bytes` (0: nothing); throws via check() naming `what`.
  CudaBuffer(size_t bytes, const std::string& what) : bytes_(bytes) {
    if (bytes > 0) {
      check(Memory::allocate(&ptr_, bytes),
            std::string(Memory::kAlloc) + " " + what + " (" + std::to_string(bytes) + " bytes)");
    }
  }
  CudaBuffer(CudaBuffer&& o) noexcept
      : ptr_(std::exchange(o.ptr_, nullptr)), bytes_(std::exchange(o.bytes_, 0)) {}
  CudaBuffer& operator=(CudaBuffer&& o) noexcept {
    if (this != &o) {
      reset();
      ptr_ = std::exchange(o.ptr_, nullptr);
      bytes_ = std::exchange(o.bytes_, 0);
    }
    return *this;
  }
  CudaBuffer(const CudaBuffer&) = delete;
  CudaBuffer& operator=(const CudaBuffer&) = delete;
  ~CudaBuffer() { reset(); }

  void reset() noexcept {
    if (ptr_ != nullptr) Memory::release(ptr_);
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

using DeviceBuffer = CudaBuffer<DeviceMemory>;
using PinnedBuffer = CudaBuffer<PinnedMemory>;

}  // namespace plinth::cuda
