#include "matmul_choice.hpp"

namespace plinth::cpu {
namespace {

bool cpu_has_avx_vnni() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_cpu_init();
  return __builtin_cpu_supports("avxvnni");
#else
  return false;
#endif
}

}  // namespace

CpuFeatures CpuFeatures::detect() {
  static const CpuFeatures f{best_isa(), cpu_has_avx512_vnni(), cpu_has_avx_vnni()};
  return f;
}

MatmulChoice choose_auto_matmul(const CpuFeatures& f) {
  if (!has_avx2(f.isa)) {
    return {MatmulPath::Float, "no AVX2: the int8 path would run its scalar kernel"};
  }
  if (f.avx512_vnni && f.isa == Isa::Avx512) return {MatmulPath::Int8, "AVX-512 VNNI"};
  if (f.avx_vnni) return {MatmulPath::Int8, "AVX-VNNI"};
  return {MatmulPath::Int8, "AVX2"};
}

}  // namespace plinth::cpu
