#include "isa.hpp"

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <initializer_list>
#include <stdexcept>
#include <string>

#if defined(__clang__) && (defined(__x86_64__) || defined(__i386__))
#include <cpuid.h>
#endif

#include "kernel_table.hpp"

namespace plinth::cpu {
namespace {

#if defined(__x86_64__) || defined(__i386__)
#if defined(__clang__)
// clang 14's __builtin_cpu_supports knows neither "f16c" nor "avxvnni" (GCC's does): CPUID
// directly, CPUID.01H:ECX[29] and CPUID.(07H,1):EAX[4] (Intel SDM vol. 2A, CPUID).
bool cpu_has_f16c_bit() {
  unsigned a = 0, b = 0, c = 0, d = 0;
  return __get_cpuid(1, &a, &b, &c, &d) != 0 && (c & (1u << 29)) != 0;
}
bool cpu_has_avxvnni_bit() {
  unsigned a = 0, b = 0, c = 0, d = 0;
  return __get_cpuid_count(7, 1, &a, &b, &c, &d) != 0 && (a & (1u << 4)) != 0;
}
#else
bool cpu_has_f16c_bit() {
  return __builtin_cpu_supports("f16c");
}
bool cpu_has_avxvnni_bit() {
  return __builtin_cpu_supports("avxvnni");
}
#endif
#endif

bool cpu_has_avx2() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_cpu_init();
  return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") && cpu_has_f16c_bit();
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

bool cpu_has_avxvnni() {
#if defined(__x86_64__) || defined(__i386__)
  return cpu_has_avx2() && cpu_has_avxvnni_bit();
#else
  return false;
#endif
}

// The value of the environment variable `var` among `choices` (named by `name_of`), or `fallback`
// when it is unset; another value is ignored with a warning on stderr naming the allowed ones.
// For benchmarks that force a lower kernel (kernels/README.md).
template <class T, class NameOf>
T env_choice(const char* var, std::initializer_list<T> choices, NameOf name_of, T fallback) {
  const char* env = std::getenv(var);
  if (env == nullptr) return fallback;
  std::string allowed;
  for (T c : choices) {
    if (std::strcmp(env, name_of(c)) == 0) return c;
    allowed += (allowed.empty() ? "" : ", ") + std::string(name_of(c));
  }
  std::fprintf(stderr, "plinth: ignoring %s=\"%s\": allowed values are %s; using %s\n", var, env,
               allowed.c_str(), name_of(fallback));
  return fallback;
}

// The initial limit: best_int8_kernel(), or the kernel PLINTH_INT8_KERNEL names (scalar, avx2,
// avx-vnni, avx512-vnni); one above what the CPU has still runs the best kernel below it
// (int8_kernel()).
Int8Kernel initial_int8_limit() {
  return env_choice(
      "PLINTH_INT8_KERNEL",
      {Int8Kernel::kScalar, Int8Kernel::kAvx2, Int8Kernel::kAvxVnni, Int8Kernel::kAvx512Vnni},
      int8_kernel_name, best_int8_kernel());
}

std::atomic<Int8Kernel>& int8_limit() {
  static std::atomic<Int8Kernel> k{initial_int8_limit()};
  return k;
}

// The initial family: best_isa(), or the one PLINTH_ISA names (scalar, avx2, avx512), capped at
// best_isa() (asking for AVX-512 on an AVX2 CPU runs AVX2).
Isa initial_isa() {
  const Isa isa =
      env_choice("PLINTH_ISA", {Isa::kScalar, Isa::kAvx2, Isa::kAvx512}, isa_name, best_isa());
  return static_cast<Isa>(std::min(static_cast<int>(isa), static_cast<int>(best_isa())));
}

std::atomic<Isa>& active() {
  static std::atomic<Isa> isa{initial_isa()};
  return isa;
}

}  // namespace

const char* isa_name(Isa isa) {
  switch (isa) {
    case Isa::kAvx512:
      return "avx512";
    case Isa::kAvx2:
      return "avx2";
    case Isa::kScalar:
      break;
  }
  return "scalar";
}

bool cpu_has_avx512_vnni() {
  static const bool has = cpu_has_vnni();
  return has;
}

const char* int8_kernel_name(Int8Kernel k) {
  switch (k) {
    case Int8Kernel::kAvx512Vnni:
      return "avx512-vnni";
    case Int8Kernel::kAvxVnni:
      return "avx-vnni";
    case Int8Kernel::kAvx2:
      return "avx2";
    case Int8Kernel::kScalar:
      break;
  }
  return "scalar";
}

bool int8_kernel_supported(Int8Kernel k) {
  static const bool avx2 = cpu_has_avx2(), avxvnni = cpu_has_avxvnni();
  switch (k) {
    case Int8Kernel::kAvx512Vnni:
      return cpu_has_avx512_vnni();
    case Int8Kernel::kAvxVnni:
      return avxvnni;
    case Int8Kernel::kAvx2:
      return avx2;
    case Int8Kernel::kScalar:
      break;
  }
  return true;
}

Int8Kernel best_int8_kernel() {
  static const Int8Kernel best = [] {
    for (Int8Kernel k : {Int8Kernel::kAvx512Vnni, Int8Kernel::kAvxVnni, Int8Kernel::kAvx2}) {
      if (int8_kernel_supported(k)) return k;
    }
    return Int8Kernel::kScalar;
  }();
  return best;
}

Int8Kernel int8_kernel() {
  const Isa isa = active_isa();
  const Int8Kernel cap = isa == Isa::kAvx512 ? Int8Kernel::kAvx512Vnni
                         : isa == Isa::kAvx2 ? Int8Kernel::kAvxVnni
                                             : Int8Kernel::kScalar;
  const Int8Kernel limit = int8_limit().load(std::memory_order_relaxed);
  int k = std::min(static_cast<int>(cap), static_cast<int>(limit));
  while (k > 0 && !int8_kernel_supported(static_cast<Int8Kernel>(k))) --k;
  return static_cast<Int8Kernel>(k);
}

void set_int8_kernel(Int8Kernel k) {
  if (!int8_kernel_supported(k)) {
    throw std::invalid_argument(
        std::string("set_int8_kernel(") + int8_kernel_name(k) + "): this CPU lacks it (best: " +
        int8_kernel_name(best_int8_kernel()) + "); use Int8Kernel::kScalar or best_int8_kernel()");
  }
  int8_limit().store(k, std::memory_order_relaxed);
}

Isa best_isa() {
  static const Isa best =
      cpu_has_avx512() ? Isa::kAvx512 : (cpu_has_avx2() ? Isa::kAvx2 : Isa::kScalar);
  return best;
}

Isa active_isa() {
  return active().load(std::memory_order_relaxed);
}

void set_active_isa(Isa isa) {
  if (static_cast<int>(isa) > static_cast<int>(best_isa())) {
    throw std::invalid_argument(std::string("set_active_isa(") + isa_name(isa) +
                                "): this CPU lacks it (best: " + isa_name(best_isa()) +
                                "); use Isa::kScalar or best_isa()");
  }
  active().store(isa, std::memory_order_relaxed);
}

namespace detail {
const KernelTable& avx512_kernels() {
  static const KernelTable table = [] {
    KernelTable t = avx2_kernels();
    t.quantize_row_q8a = quantize_row_q8a_avx512;
    t.dots_heads = dots_heads_avx512;
    t.weighted_sum_heads = weighted_sum_heads_avx512;
    t.dots_heads_f16 = dots_heads_f16_avx512;
    t.weighted_sum_heads_f16 = weighted_sum_heads_f16_avx512;
    t.silu_mul = silu_mul_avx512;
    t.exp_sub_sum = exp_sub_sum_avx512;
    t.scale = scale_avx512;
    return t;
  }();
  return table;
}

const KernelTable& active_kernels() {
  switch (active_isa()) {
    case Isa::kAvx512:
      return avx512_kernels();
    case Isa::kAvx2:
      return avx2_kernels();
    case Isa::kScalar:
      break;
  }
  return scalar_kernels();
}
}  // namespace detail

}  // namespace plinth::cpu
