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

std::atomic<Isa>& active() {
  static std::atomic<Isa> isa{best_isa()};
  return isa;
}

}  // namespace

const char* isa_name(Isa isa) {
  return isa == Isa::Avx2 ? "avx2" : "scalar";
}

Isa best_isa() {
  static const Isa best = cpu_has_avx2() ? Isa::Avx2 : Isa::Scalar;
  return best;
}

Isa active_isa() {
  return active().load(std::memory_order_relaxed);
}

void set_active_isa(Isa isa) {
  if (isa == Isa::Avx2 && best_isa() != Isa::Avx2) {
    throw std::invalid_argument(
        "set_active_isa(avx2): this CPU lacks AVX2/FMA/F16C; use Isa::Scalar");
  }
  active().store(isa, std::memory_order_relaxed);
}

namespace detail {
const KernelTable& active_kernels() {
  return active_isa() == Isa::Avx2 ? avx2_kernels() : scalar_kernels();
}
}  // namespace detail

}  // namespace plinth::cpu
