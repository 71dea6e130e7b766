// The machine's limits as one record: triad bandwidths per cache level and thread count, int8 and
// f32 compute peaks per thread count; measured in-process or read back from bench_roofline --json.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "cache_info.hpp"
#include "triad.hpp"

namespace plinth::roofline {

/// A compute peak at one thread count.
struct Peak {
  int threads = 0;
  std::vector<double> per_run;  // MAC/s of each run (int8 MACs or f32 FMAs; 1 MAC = 2 ops), wall
  double median = 0;            // MAC/s, wall clock: what this process got
  std::vector<double> cpu_per_run;  // MAC/s per CPU second of the slowest thread
  double cpu_median = 0;            // the hardware's rate while our threads ran
};

/// A triad bandwidth with the cache level its working set was sized for.
struct Bandwidth {
  std::string where;  // "L2", "L3", "DRAM" or an extra size ("32MiB")
  TriadResult triad;
};

/// Everything bench_roofline measures.
struct Bounds {
  std::string cpu_model;
  std::string int8_isa, f32_isa;  // isa_name() of the kernels that ran
  std::vector<CacheLevel> caches;
  std::vector<Bandwidth> bandwidth;
  std::vector<Peak> int8, f32;
  int runs = 0;
  std::string source;  // "measured in-process" or the JSON file read

  /// Median triad GB/s of `where` at the largest measured thread count ≤ threads (the smallest
  /// count measured when none is ≤ threads), per CPU second (the hardware's rate, unaffected by
  /// other processes sharing the cores; the wall-clock figures are in `bandwidth`). Throws
  /// std::out_of_range naming `where` when it was not measured.
  double gbps(const std::string& where, int threads) const;
  /// Median int8 MAC/s per CPU second, same thread-count rule and error.
  double int8_macs(int threads) const;
  /// Median f32 FMA/s per CPU second, same thread-count rule and error.
  double f32_fmas(int threads) const;
};

/// What measure_bounds runs.
struct MeasureOptions {
  std::vector<int> threads = {1, 2};
  int runs = 5;
  bool cache_levels = true;         // also the L2 and L3 triads (DRAM always)
  double peak_seconds = 0.2;        // target length of one peak run
  std::vector<uint64_t> extra_mib;  // further triad working sets, MiB (reported as "<N>MiB")
};

/// Measures the bounds: triads with working sets of ½ L2 per thread, ½ L3 (if L3 is larger than
/// the L2s together, else skipped) and max(4 × L3, 256 MiB) (DRAM), sizes from read_caches() (a
/// missing cache level: its triad is skipped; DRAM without L3 info: 256 MiB); then the int8 and
/// f32 peaks with cpu_info()'s kernels, each run ~peak_seconds long. Medians over opts.runs.
/// Takes seconds: ~(2 + 2 × runs × peak_seconds) per thread count. Uses every thread count
/// in opts.threads (each ≥ 1, else std::invalid_argument). The DRAM triad allocates its working
/// set (≥ 256 MiB): std::bad_alloc when memory is short.
Bounds measure_bounds(const MeasureOptions& opts);

/// The bench_roofline --json document (schema "plinth.roofline/1").
nlohmann::json to_json(const Bounds& b);

/// Parses to_json()'s document; throws std::runtime_error naming `origin` and the missing or
/// mistyped field when the document is not a plinth.roofline/1 one.
Bounds bounds_from_json(const nlohmann::json& doc, const std::string& origin);

/// Reads `path` (a bench_roofline --json file); throws std::runtime_error naming the file when it
/// cannot be read or parsed, and telling how to write one.
Bounds load_bounds(const std::string& path);

}  // namespace plinth::roofline
