#include "device_check.hpp"

namespace plinth::cuda {

std::string check_device_index(int device_count, int requested) {
  if (device_count <= 0) {
    return "no CUDA device: the CUDA runtime reports no usable GPU (none installed, no driver, "
           "or CUDA_VISIBLE_DEVICES hides them); backend_cuda needs an NVIDIA GPU of compute "
           "capability >= 9.0 (H100/H200) — on this machine use backend_cpu (manifests/cpu.json)";
  }
  if (requested < 0 || requested >= device_count) {
    return "device " + std::to_string(requested) + " requested, " + std::to_string(device_count) +
           " present; set backend_cuda's \"device\" to " +
           (device_count == 1 ? std::string("0") : "0.." + std::to_string(device_count - 1)) +
           " (or check CUDA_VISIBLE_DEVICES)";
  }
  return "";
}

std::string check_device(int device_count, int requested, int cc_major, int cc_minor) {
  std::string msg = check_device_index(device_count, requested);
  if (!msg.empty()) return msg;
  if (cc_major < kMinComputeMajor ||
      (cc_major == kMinComputeMajor && cc_minor < kMinComputeMinor)) {
    return "compute capability " + std::to_string(cc_major) + "." + std::to_string(cc_minor) +
           " unsupported: backend_cuda is built for sm_90 (H100/H200) and needs >= " +
           std::to_string(kMinComputeMajor) + "." + std::to_string(kMinComputeMinor) + " (device " +
           std::to_string(requested) +
           "; its PTX runs on later chips only); use a Hopper or newer GPU, or backend_cpu";
  }
  return "";
}

}  // namespace plinth::cuda
