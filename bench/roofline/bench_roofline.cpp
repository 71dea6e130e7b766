// bench_roofline: this machine's limits, the bounds plinth's CPU figures are compared with.
//   memory:  STREAM-style triad a[i] = b[i] + s * c[i] (doubles), working sets sized for L2, L3
//            and DRAM from sysfs, GB/s counting 3 arrays (write-allocate adds a 4th)
//   compute: int8 dot-product peak (AVX-512 VNNI vpdpbusd chains; AVX2 vpmaddubsw without VNNI)
//            and f32 FMA peak (vfmadd chains), MAC/s (1 MAC = 2 ops)
// Each at every --threads count (threads pinned to distinct CPUs where the affinity mask allows),
// the median of --runs runs. Figures only, never pass/fail.
//   bench_roofline [--threads 1,2] [--runs 5] [--json FILE] [--no-cache-levels] [--triad-mib 8,32]
#include <CLI/CLI.hpp>

#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

#include "cpu_info.hpp"
#include "roofline.hpp"

namespace {

using plinth::roofline::Bounds;

std::string human_bytes(uint64_t b) {
  char buf[32];
  if (b >= (uint64_t{1} << 20)) {
    std::snprintf(buf, sizeof buf, "%.1f MiB", static_cast<double>(b) / (1 << 20));
  } else {
    std::snprintf(buf, sizeof buf, "%.0f KiB", static_cast<double>(b) / (1 << 10));
  }
  return buf;
}

void print(const Bounds& b) {
  std::printf("cpu: %s\n", b.cpu_model.c_str());
  std::printf("caches (sysfs, cpu0):");
  for (const auto& c : b.caches) {
    std::printf(" L%d %s %s (cpus %s);", c.level, c.type.c_str(), human_bytes(c.size_bytes).c_str(),
                c.shared_cpu_list.c_str());
  }
  std::printf("\nkernels: int8 %s, f32 %s; median of %d runs\n\n", b.int8_isa.c_str(),
              b.f32_isa.c_str(), b.runs);
  std::printf(
      "triad a[i] = b[i] + s*c[i], GB/s counting 3 arrays x 8 B (x4/3 with write-allocate)\n");
  std::printf("%-8s %-8s %14s %10s %10s %10s %s\n", "where", "threads", "working set", "GB/s cpu",
              "x4/3", "GB/s wall", "runs (cpu)");
  for (const auto& x : b.bandwidth) {
    std::string runs;
    for (double g : x.triad.cpu_gbps) {
      char buf[32];
      std::snprintf(buf, sizeof buf, "%s%.1f", runs.empty() ? "" : " ", g);
      runs += buf;
    }
    std::printf("%-8s %-8d %14s %10.1f %10.1f %10.1f %s%s\n", x.where.c_str(), x.triad.threads,
                human_bytes(x.triad.working_set_bytes).c_str(), x.triad.median_cpu_gbps,
                x.triad.median_cpu_gbps * 4 / 3, x.triad.median_gbps, runs.c_str(),
                x.triad.pinned ? "" : " (not pinned)");
  }
  std::printf("\npeaks, G multiply-adds/s (GOPS = 2 x GMAC/s)\n");
  std::printf(
      "cpu = per CPU second of the slowest thread (the hardware's rate); wall = what this "
      "process got with other load on the cores\n");
  std::printf("%-24s %-8s %12s %12s %14s\n", "kernel", "threads", "GMAC/s cpu", "GOPS cpu",
              "GMAC/s wall");
  for (const auto& p : b.int8) {
    std::printf("%-24s %-8d %12.1f %12.1f %14.1f\n", ("int8 " + b.int8_isa).c_str(), p.threads,
                p.cpu_median / 1e9, 2 * p.cpu_median / 1e9, p.median / 1e9);
  }
  for (const auto& p : b.f32) {
    std::printf("%-24s %-8d %12.1f %12.1f %14.1f\n", ("f32 FMA " + b.f32_isa).c_str(), p.threads,
                p.cpu_median / 1e9, 2 * p.cpu_median / 1e9, p.median / 1e9);
  }
}

}  // namespace

int main(int argc, char** argv) {
  try {
    plinth::roofline::MeasureOptions opts;
    std::string json_path;
    bool no_cache_levels = false;
    CLI::App app{"bench_roofline: memory bandwidth and compute peaks of this machine"};
    app.add_option("--threads", opts.threads, "thread counts, comma-separated")
        ->delimiter(',')
        ->check(CLI::Range(1, 1024))
        ->capture_default_str();
    app.add_option("--runs", opts.runs, "runs per figure (the median is printed)")
        ->check(CLI::Range(1, 1000))
        ->capture_default_str();
    app.add_option("--json", json_path,
                   "also write the figures here (plinth.roofline/1), for "
                   "bench_forward / bench_generate --roofline FILE");
    app.add_option("--triad-mib", opts.extra_mib,
                   "further triad working sets, MiB, comma-separated")
        ->delimiter(',')
        ->check(CLI::Range(1, 1 << 16));
    app.add_flag("--no-cache-levels", no_cache_levels, "skip the L2 and L3 triads");
    CLI11_PARSE(app, argc, argv);
    opts.cache_levels = !no_cache_levels;
    const Bounds b = plinth::roofline::measure_bounds(opts);
    print(b);
    if (!json_path.empty()) {
      std::ofstream out(json_path);
      out << plinth::roofline::to_json(b).dump(2) << "\n";
      if (!out) {
        std::fprintf(stderr, "bench_roofline: cannot write %s\n", json_path.c_str());
        return 1;
      }
      std::printf("\nwrote %s\n", json_path.c_str());
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "bench_roofline: %s\n", e.what());
    return 1;
  } catch (...) {
    std::fprintf(stderr, "bench_roofline: unknown exception\n");
    return 1;
  }
  return 0;
}
