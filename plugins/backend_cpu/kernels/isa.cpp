#include "isa.hpp"

#include <atomic>
#include <stdexcept>
#include <string>

#include "kernel_table.hpp"

namespace plinth::cpu {
namespace {

bool cpu_has_avx2() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_cpu_init();
  return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") &&
         __builtin_cpu_supports("f16c");
#else
  return false;
#endif
}

bool cpu_has_avx512() {
#if defined(__x86_64__) || defined(__i386__)
  return cpu_has_avx2() && __builtin_cpu_supports("avx512f");
#else
  return false;
#endif
}

bool cpu_has_vnni() {
#if defined(__x86_64__) || defined(__i386__)
  return cpu_has_avx512() && __builtin_cpu_supports("avx512bw") &&
         __builtin_cpu_supports("avx512vnni");
#else
  return false;
#endif
}

std::atomic<Isa>& active() {
  static std::atomic<Isa> isa{best_isa()};
  return isa;
}

}  // namespace

const char* isa_name(Isa isa) {
  switch (isa) {
    case Isa::Avx512:
      return "avx512";
    case Isa::Avx2:
      return "avx2";
    case Isa::Scalar:
      break;
  }
  return "scalar";
}

bool cpu_has_avx512_vnni() {
  static const bool has = cpu_has_vnni();
  return has;
}

Isa best_isa() {
  static const Isa best =
      cpu_has_avx512() ? Isa::Avx512 : (cpu_has_avx2() ? Isa::Avx2 : Isa::Scalar);
  return best;
}

Isa active_isa() {
  return active().load(std::memory_order_relaxed);
}

void set_active_isa(Isa isa) {
  if (static_cast<int>(isa) > static_cast<int>(best_isa())) {
    throw std::invalid_argument(std::string("set_active_isa(") + isa_name(isa) +
                                "): this CPU lacks it (best: " + isa_name(best_isa()) +
                                "); use Isa::Scalar or best_isa()");
  }
  active().store(isa, std::memory_order_relaxed);
}

namespace detail {
const KernelTable& avx512_kernels() {
  static const KernelTable table = [] {
    KernelTable t = avx2_kernels();
    t.dots_heads = dots_heads_avx512;
    t.weighted_sum_heads = weighted_sum_heads_avx512;
    t.dots_heads_f16 = dots_heads_f16_avx512;
    t.weighted_sum_heads_f16 = weighted_sum_heads_f16_avx512;
    return t;
  }();
  return table;
}

const KernelTable& active_kernels() {
  switch (active_isa()) {
    case Isa::Avx512:
      return avx512_kernels();
    case Isa::Avx2:
      return avx2_kernels();
    case Isa::Scalar:
      break;
  }
  return scalar_kernels();
}
}  // namespace detail

}  // namespace plinth::cpu
