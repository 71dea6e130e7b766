// Whether backend_cuda can run on the device the config names: the messages for no device, an
// index out of range and a compute capability the build has no code for. Pure C++: the caller
// queries the CUDA runtime (cudaGetDeviceCount, cudaDeviceGetAttribute) and passes the numbers.
#pragma once

#include <string>

namespace plinth::cuda {

/// Compute capability the plugin is built for: sm_90 cubins (H100/H200) plus compute_90 PTX,
/// which the driver JIT-compiles for later chips (CUDA C Programming Guide, "Binary
/// Compatibility" and "PTX Compatibility"). Older chips (< 9.0) cannot run it.
inline constexpr int kMinComputeMajor = 9;
inline constexpr int kMinComputeMinor = 0;

/// "" when `requested` is a valid ordinal for `device_count` devices, else the message:
///  - device_count <= 0: "no CUDA device: ..." (pass 0 when cudaGetDeviceCount fails with
///    cudaErrorNoDevice or cudaErrorInsufficientDriver; the message says to use backend_cpu);
///  - requested outside [0, device_count): "device 3 requested, 2 present; set backend_cuda's
///    \"device\" to 0..1 (or check CUDA_VISIBLE_DEVICES)".
std::string check_device_index(int device_count, int requested);

/// check_device_index, then the compute capability cc_major.cc_minor of device `requested`
/// (only looked at when the index is valid): "" when >= 9.0, else "compute capability 7.5
/// unsupported: backend_cuda is built for sm_90 (H100/H200) and needs >= 9.0 ...". Thread-safe.
std::string check_device(int device_count, int requested, int cc_major, int cc_minor);

}  // namespace plinth::cuda
