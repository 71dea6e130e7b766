#include "roofline.hpp"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <fstream>
#include <stdexcept>

#include "cpu_info.hpp"
#include "peaks.hpp"
#include "pinned_threads.hpp"

namespace plinth::roofline {
namespace {

using json = nlohmann::json;

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/// Iterations of `k` that take about `seconds` on one thread.
uint64_t calibrate(const PeakKernel& k, double seconds) {
  uint64_t iters = 1 << 12;
  for (;;) {
    const auto t0 = std::chrono::steady_clock::now();
    volatile double sink = k.run(iters);
    (void)sink;
    const double dt = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    if (dt > seconds / 8 || iters > (uint64_t{1} << 40)) {
      return std::max<uint64_t>(1,
                                static_cast<uint64_t>(static_cast<double>(iters) * seconds / dt));
    }
    iters *= 4;
  }
}

Peak measure_peak(const PeakKernel& k, int threads, int runs, uint64_t iters) {
  Peak p;
  p.threads = threads;
  std::atomic<double> sink{0};
  for (int r = 0; r < runs; ++r) {
    const ParallelRun run = run_pinned(
        threads, [&](int) { (void)k.run(iters / 64 + 1); },  // warm up: clocks and the path
        [&](int) { sink.store(k.run(iters), std::memory_order_relaxed); });
    const double macs = static_cast<double>(iters) * static_cast<double>(k.macs_per_iter) * threads;
    p.per_run.push_back(macs / run.seconds);
    p.cpu_per_run.push_back(macs / run.cpu_seconds);
  }
  p.median = median(p.per_run);
  p.cpu_median = median(p.cpu_per_run);
  return p;
}

template <class Item, class Key>
const Item& pick(const std::vector<Item>& items, int threads, Key threads_of,
                 const std::string& what) {
  const Item* best = nullptr;
  const Item* fewest = nullptr;
  for (const Item& it : items) {
    const int t = threads_of(it);
    if (t <= threads && (!best || t > threads_of(*best))) best = &it;
    if (!fewest || t < threads_of(*fewest)) fewest = &it;
  }
  if (best) return *best;
  if (fewest) return *fewest;
  throw std::out_of_range("roofline bounds: no " + what +
                          " figure measured; run bench_roofline (with this level's cache info)");
}

template <class T>
T field(const json& j, const char* key, const std::string& origin) {
  if (!j.contains(key)) {
    throw std::runtime_error(origin + ": missing field '" + key +
                             "' (expected a bench_roofline --json file, plinth.roofline/1)");
  }
  try {
    return j.at(key).get<T>();
  } catch (const json::exception& e) {
    throw std::runtime_error(origin + ": field '" + key + "': " + e.what());
  }
}

json peak_json(const Peak& p) {
  return {{"threads", p.threads},
          {"median_macs_per_s", p.median},
          {"runs_macs_per_s", p.per_run},
          {"median_cpu_macs_per_s", p.cpu_median},
          {"runs_cpu_macs_per_s", p.cpu_per_run}};
}

Peak peak_from(const json& j, const std::string& origin) {
  Peak p;
  p.threads = field<int>(j, "threads", origin);
  p.median = field<double>(j, "median_macs_per_s", origin);
  p.per_run = field<std::vector<double>>(j, "runs_macs_per_s", origin);
  p.cpu_median = field<double>(j, "median_cpu_macs_per_s", origin);
  p.cpu_per_run = field<std::vector<double>>(j, "runs_cpu_macs_per_s", origin);
  return p;
}

}  // namespace

double Bounds::gbps(const std::string& where, int threads) const {
  std::vector<Bandwidth> level;
  for (const Bandwidth& b : bandwidth) {
    if (b.where == where) level.push_back(b);
  }
  return pick(
             level, threads, [](const Bandwidth& b) { return b.triad.threads; }, where + " triad")
      .triad.median_cpu_gbps;
}

double Bounds::int8_macs(int threads) const {
  return pick(
             int8, threads, [](const Peak& p) { return p.threads; }, "int8 peak")
      .cpu_median;
}

double Bounds::f32_fmas(int threads) const {
  return pick(
             f32, threads, [](const Peak& p) { return p.threads; }, "f32 peak")
      .cpu_median;
}

Bounds measure_bounds(const MeasureOptions& opts) {
  for (int t : opts.threads) {
    if (t < 1) throw std::invalid_argument("measure_bounds: thread counts must be ≥ 1");
  }
  if (opts.runs < 1) throw std::invalid_argument("measure_bounds: runs must be ≥ 1");
  Bounds b;
  const CpuInfo cpu = cpu_info();
  b.cpu_model = cpu.model;
  b.caches = read_caches();
  b.runs = opts.runs;
  b.source = "measured in-process";
  const uint64_t l2 = cache_size(b.caches, 2);
  const uint64_t l3 = cache_size(b.caches, 3);
  const uint64_t dram = std::max<uint64_t>(4 * l3, uint64_t{256} << 20);
  for (int t : opts.threads) {
    const auto ut = static_cast<uint64_t>(t);
    if (opts.cache_levels && l2 > 0) {
      b.bandwidth.push_back({"L2", measure_triad(l2 / 2 * ut, t, opts.runs)});
    }
    if (opts.cache_levels && l3 > l2 * ut) {
      b.bandwidth.push_back({"L3", measure_triad(l3 / 2, t, opts.runs)});
    }
    b.bandwidth.push_back({"DRAM", measure_triad(dram, t, opts.runs)});
    for (uint64_t mib : opts.extra_mib) {
      b.bandwidth.push_back({std::to_string(mib) + "MiB", measure_triad(mib << 20, t, opts.runs)});
    }
  }
  const PeakKernel i8 = int8_kernel(cpu.int8_isa);
  const PeakKernel f32 = f32_kernel(cpu.f32_isa);
  b.int8_isa = isa_name(i8.isa);
  b.f32_isa = isa_name(f32.isa);
  const uint64_t i8_iters = calibrate(i8, opts.peak_seconds);
  const uint64_t f32_iters = calibrate(f32, opts.peak_seconds);
  for (int t : opts.threads) {
    b.int8.push_back(measure_peak(i8, t, opts.runs, i8_iters));
    b.f32.push_back(measure_peak(f32, t, opts.runs, f32_iters));
  }
  return b;
}

json to_json(const Bounds& b) {
  json caches = json::array();
  for (const CacheLevel& c : b.caches) {
    caches.push_back({{"level", c.level},
                      {"type", c.type},
                      {"size_bytes", c.size_bytes},
                      {"shared_cpu_list", c.shared_cpu_list}});
  }
  json bw = json::array();
  for (const Bandwidth& x : b.bandwidth) {
    bw.push_back({{"where", x.where},
                  {"threads", x.triad.threads},
                  {"working_set_bytes", x.triad.working_set_bytes},
                  {"pinned", x.triad.pinned},
                  {"median_gbps", x.triad.median_gbps},
                  {"runs_gbps", x.triad.gbps},
                  {"median_cpu_gbps", x.triad.median_cpu_gbps},
                  {"runs_cpu_gbps", x.triad.cpu_gbps}});
  }
  json i8 = json::array(), f32 = json::array();
  for (const Peak& p : b.int8) i8.push_back(peak_json(p));
  for (const Peak& p : b.f32) f32.push_back(peak_json(p));
  return {{"schema", "plinth.roofline/1"},
          {"cpu_model", b.cpu_model},
          {"int8_isa", b.int8_isa},
          {"f32_isa", b.f32_isa},
          {"runs", b.runs},
          {"caches", caches},
          {"triad_bytes_counted", "3 arrays x 8 bytes per element (write-allocate adds a 4th)"},
          {"rates", "median_*: wall clock; median_cpu_*: per CPU second of the slowest thread"},
          {"bandwidth", bw},
          {"int8_macs", i8},
          {"f32_fmas", f32}};
}

Bounds bounds_from_json(const json& doc, const std::string& origin) {
  if (!doc.is_object() || doc.value("schema", "") != "plinth.roofline/1") {
    throw std::runtime_error(origin +
                             ": not a plinth.roofline/1 document; write one with "
                             "bench_roofline --json FILE");
  }
  Bounds b;
  b.source = origin;
  b.cpu_model = field<std::string>(doc, "cpu_model", origin);
  b.int8_isa = field<std::string>(doc, "int8_isa", origin);
  b.f32_isa = field<std::string>(doc, "f32_isa", origin);
  b.runs = field<int>(doc, "runs", origin);
  for (const json& c : field<json>(doc, "caches", origin)) {
    b.caches.push_back({field<int>(c, "level", origin), field<std::string>(c, "type", origin),
                        field<uint64_t>(c, "size_bytes", origin),
                        field<std::string>(c, "shared_cpu_list", origin)});
  }
  for (const json& x : field<json>(doc, "bandwidth", origin)) {
    Bandwidth w;
    w.where = field<std::string>(x, "where", origin);
    w.triad.threads = field<int>(x, "threads", origin);
    w.triad.working_set_bytes = field<uint64_t>(x, "working_set_bytes", origin);
    w.triad.pinned = field<bool>(x, "pinned", origin);
    w.triad.median_gbps = field<double>(x, "median_gbps", origin);
    w.triad.gbps = field<std::vector<double>>(x, "runs_gbps", origin);
    w.triad.median_cpu_gbps = field<double>(x, "median_cpu_gbps", origin);
    w.triad.cpu_gbps = field<std::vector<double>>(x, "runs_cpu_gbps", origin);
    b.bandwidth.push_back(w);
  }
  for (const json& p : field<json>(doc, "int8_macs", origin))
    b.int8.push_back(peak_from(p, origin));
  for (const json& p : field<json>(doc, "f32_fmas", origin)) b.f32.push_back(peak_from(p, origin));
  return b;
}

Bounds load_bounds(const std::string& path) {
  std::ifstream in(path);
  if (!in) {
    throw std::runtime_error("cannot read roofline file " + path +
                             "; write it with: bench_roofline --json " + path);
  }
  json doc;
  try {
    doc = json::parse(in);
  } catch (const json::exception& e) {
    throw std::runtime_error(path + ": not JSON (" + e.what() + ")");
  }
  return bounds_from_json(doc, path);
}

}  // namespace plinth::roofline
