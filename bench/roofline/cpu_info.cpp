#include "cpu_info.hpp"

#include <fstream>

namespace plinth::roofline {
namespace {

std::string read_model_name() {
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("model name", 0) == 0) {
      const size_t colon = line.find(':');
      if (colon != std::string::npos) {
        const size_t start = line.find_first_not_of(" \t", colon + 1);
        return start == std::string::npos ? "unknown" : line.substr(start);
      }
    }
  }
  return "unknown";
}

}  // namespace

CpuInfo cpu_info() {
  CpuInfo info;
  info.model = read_model_name();
#if defined(PLINTH_ROOFLINE_X86)
  __builtin_cpu_init();
  const bool avx2 = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
  const bool avx512 = avx2 && __builtin_cpu_supports("avx512f");
  const bool vnni =
      avx512 && __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512vnni");
  info.int8_isa = vnni ? Isa::kAvx512Vnni : (avx2 ? Isa::kAvx2 : Isa::kScalar);
  info.f32_isa = avx512 ? Isa::kAvx512 : (avx2 ? Isa::kAvx2 : Isa::kScalar);
#endif
  return info;
}

const char* isa_name(Isa isa) {
  switch (isa) {
    case Isa::kAvx2:
      return "avx2";
    case Isa::kAvx512:
      return "avx512";
    case Isa::kAvx512Vnni:
      return "avx512-vnni";
    case Isa::kScalar:
      break;
  }
  return "scalar";
}

}  // namespace plinth::roofline
