#include "triad.hpp"

#include <algorithm>
#include <memory>
#include <stdexcept>
#include <string>

#include "pinned_threads.hpp"

namespace plinth::roofline {
namespace {

// The loop body, inlined into one function per instruction set below so that each is vectorised
// for its own target (GCC and Clang inline a function into one whose target is a superset).
inline __attribute__((always_inline)) void triad_body(double* __restrict a,
                                                      const double* __restrict b,
                                                      const double* __restrict c, double s,
                                                      uint64_t n) {
  for (uint64_t i = 0; i < n; ++i) a[i] = b[i] + s * c[i];
}

using TriadFn = void (*)(double* __restrict, const double* __restrict, const double* __restrict,
                         double, uint64_t);

__attribute__((noinline)) void triad_default(double* __restrict a, const double* __restrict b,
                                             const double* __restrict c, double s, uint64_t n) {
  triad_body(a, b, c, s, n);
}

#if defined(PLINTH_ROOFLINE_X86)
__attribute__((noinline, target("avx2"))) void triad_avx2(double* __restrict a,
                                                          const double* __restrict b,
                                                          const double* __restrict c, double s,
                                                          uint64_t n) {
  triad_body(a, b, c, s, n);
}

__attribute__((noinline, target("avx512f"))) void triad_avx512f(double* __restrict a,
                                                                const double* __restrict b,
                                                                const double* __restrict c,
                                                                double s, uint64_t n) {
  triad_body(a, b, c, s, n);
}
#endif

// The widest variant this CPU runs (the choice GCC's target_clones("avx512f", "avx2", "default")
// made, written out so that Clang compiles it too).
TriadFn pick_triad() {
#if defined(PLINTH_ROOFLINE_X86)
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx512f")) return triad_avx512f;
  if (__builtin_cpu_supports("avx2")) return triad_avx2;
#endif
  return triad_default;
}

struct Slice {
  std::unique_ptr<double[]> a, b, c;
};

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

}  // namespace

TriadResult measure_triad(uint64_t working_set_bytes, int threads, int runs) {
  if (threads < 1 || runs < 1) {
    throw std::invalid_argument("measure_triad: threads and runs must be ≥ 1 (got " +
                                std::to_string(threads) + ", " + std::to_string(runs) + ")");
  }
  const uint64_t n = working_set_bytes / (3 * sizeof(double) * static_cast<uint64_t>(threads));
  if (n == 0) {
    throw std::invalid_argument("measure_triad: working set of " +
                                std::to_string(working_set_bytes) + " bytes is too small");
  }
  const uint64_t bytes_per_pass = 3 * sizeof(double) * n * static_cast<uint64_t>(threads);
  const uint64_t reps = std::max<uint64_t>(2, (uint64_t{4} << 30) / bytes_per_pass);
  std::vector<Slice> slices(static_cast<size_t>(threads));
  const TriadFn triad = pick_triad();
  TriadResult r;
  r.working_set_bytes = bytes_per_pass;
  r.threads = threads;
  r.pinned = true;
  for (int run = 0; run < runs; ++run) {
    auto setup = [&](int t) {
      Slice& s = slices[static_cast<size_t>(t)];
      if (!s.a) {  // first touch on the thread that uses the slice
        s.a.reset(new double[n]);
        s.b.reset(new double[n]);
        s.c.reset(new double[n]);
        std::fill_n(s.a.get(), n, 0.0);
        std::fill_n(s.b.get(), n, 1.0);
        std::fill_n(s.c.get(), n, 2.0);
      }
      triad(s.a.get(), s.b.get(), s.c.get(), 3.0, n);
    };
    auto work = [&](int t) {
      Slice& s = slices[static_cast<size_t>(t)];
      for (uint64_t k = 0; k < reps; ++k) triad(s.a.get(), s.b.get(), s.c.get(), 3.0, n);
    };
    const ParallelRun p = run_pinned(threads, setup, work);
    r.pinned = r.pinned && p.pinned;
    const auto bytes = static_cast<double>(bytes_per_pass * reps);
    r.gbps.push_back(bytes / p.seconds / 1e9);
    r.cpu_gbps.push_back(bytes / p.cpu_seconds / 1e9);
  }
  r.median_gbps = median(r.gbps);
  r.median_cpu_gbps = median(r.cpu_gbps);
  return r;
}

}  // namespace plinth::roofline
