// STREAM-style triad bandwidth (McCalpin, STREAM benchmark: a[i] = b[i] + s * c[i], doubles).
#pragma once

#include <cstdint>
#include <vector>

namespace plinth::roofline {

/// One triad measurement.
struct TriadResult {
  uint64_t working_set_bytes = 0;  // the three arrays of all threads together
  int threads = 0;
  std::vector<double> gbps;  // one figure per run, 1e9 bytes/s counting 3 arrays × 8 bytes per i
  double median_gbps = 0;    // wall-clock rate: what this process got
  std::vector<double> cpu_gbps;  // the same per CPU second of the slowest thread (ParallelRun)
  double median_cpu_gbps = 0;    // the hardware's rate while our threads ran
  bool pinned = false;
};

/// Runs the triad `runs` times on `threads` threads (run_pinned), each thread on its own slice
/// a/b/c of working_set_bytes / threads. Each run repeats the triad until ≥ ~4 GB were counted
/// (at least twice), after one untimed pass per thread that warms its caches. Bandwidth counts
/// STREAM's 3 arrays; with ordinary stores the CPU also reads a's lines first (write-allocate), so
/// the traffic is 4/3 of the figure. The vectorised kernel is chosen at run time (one loop
/// compiled with target("avx512f"), target("avx2") and the baseline; __builtin_cpu_supports).
/// Throws std::invalid_argument for threads < 1, runs < 1 or a working set under 3 × 8 × threads
/// bytes; std::bad_alloc when memory runs out.
TriadResult measure_triad(uint64_t working_set_bytes, int threads, int runs);

}  // namespace plinth::roofline
