// bench_continuous: the same workload run three ways in one process on one EngineHost —
//   sequential   one request at a time;
//   static       batches of B requests, the next batch starts only when all of the batch finished
//                (a batch waits for its longest member; finished members leave the paged KV and the
//                forward batch, so this baseline pays no padding compute — a generous baseline);
//   continuous   all requests queued at t = 0, the scheduler admits one as soon as a slot frees
//                (max_num_seqs = B).
// Workload (fixed seed): N requests, prompt length ~ U{16..256} tokens, output length ~
// U{8..128} tokens (std::mt19937_64 seeded with --seed, default 0, drawn prompt then output per
// request), prompt ids uniform in [100, vocab) from the same generator, greedy, ignore_eos (every
// request generates exactly its output length). Every request is queued at the start of its mode's
// run, so TTFT includes queueing: TTFT = first token − run start; TPOT = (finish − first token) /
// (output − 1). KV usage is sampled after every step: usage = used / total blocks, waste = 1 −
// used slots / allocated slots; time average (weighted by step time) and at peak usage.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "app/engine_host.hpp"
#include "runtime/host_context.hpp"
#include "runtime/logging.hpp"

namespace fs = std::filesystem;
using namespace plinth;

namespace {

struct Options {
  std::string manifest = PLINTH_SOURCE_DIR_FOR_BENCH "/manifests/cpu.json";
  int requests = 128;
  int batch = 16;
  uint64_t seed = 0;
  int prompt_min = 16, prompt_max = 256, output_min = 8, output_max = 128;
  std::string modes = "sequential,static,continuous";
};

struct Work {
  std::vector<int32_t> prompt;
  int32_t output_len;
};

std::vector<Work> make_workload(const Options& o, uint32_t vocab) {
  std::mt19937_64 rng(o.seed);
  auto uni = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
  std::vector<Work> w;
  for (int i = 0; i < o.requests; ++i) {
    Work x;
    x.prompt.resize(static_cast<size_t>(uni(o.prompt_min, o.prompt_max)));
    x.output_len = uni(o.output_min, o.output_max);
    for (int32_t& t : x.prompt) t = uni(100, static_cast<int>(vocab) - 1);
    w.push_back(std::move(x));
  }
  return w;
}

// The manifest with the scheduler's max_num_seqs set to `batch`, written to a temp folder with the
// model and library paths made absolute.
fs::path derived_manifest(const Options& o) {
  const fs::path src = fs::absolute(o.manifest);
  nlohmann::json j = nlohmann::json::parse(std::ifstream(src));
  const fs::path dir = src.parent_path();
  if (j.contains("model")) j["model"] = (dir / j["model"].get<std::string>()).lexically_normal();
  for (auto& p : j.at("plugins")) {
    std::string lib = p.at("library");
    if (lib.find('/') != std::string::npos || lib.ends_with(".so")) p["library"] = (dir / lib);
    if (p.at("kind") == "scheduler") p["config"]["max_num_seqs"] = o.batch;
  }
  fs::path out = fs::temp_directory_path() / "plinth_bench_continuous.json";
  std::ofstream(out) << j.dump(2);
  return out;
}

struct Figures {
  std::string mode;
  double wall = 0;
  uint64_t output_tokens = 0, steps = 0, preemptions = 0;
  std::vector<double> ttft, tpot;
  double peak_usage = 0, waste_at_peak = 0, waste_avg = 0, usage_avg = 0;
};

double mean(const std::vector<double>& v) {
  double s = 0;
  for (double x : v) s += x;
  return v.empty() ? 0 : s / static_cast<double>(v.size());
}
double p99(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const size_t k = static_cast<size_t>(std::ceil(0.99 * static_cast<double>(v.size()))) - 1;
  return v[std::min(k, v.size() - 1)];
}

class Runner {
 public:
  Runner(Engine& e, const std::vector<Work>& w) : engine_(e), work_(w) {}

  // Runs the requests in `groups` one group after another (each group submitted at once, the next
  // when it has finished).
  Figures run(const std::string& mode, const std::vector<std::vector<size_t>>& groups) {
    Figures f;
    f.mode = mode;
    const uint64_t pre0 = engine_.stats().num_preemptions;
    std::map<uint64_t, size_t> index;
    std::vector<double> first(work_.size(), 0), done(work_.size(), 0);
    std::vector<uint32_t> count(work_.size(), 0);
    double wsum = 0, wt = 0, usum = 0;
    t0_ = clock::now();
    double last = 0;
    for (const auto& g : groups) {
      for (size_t i : g) {
        GenerationRequest r;
        r.prompt = work_[i].prompt;
        r.params.temperature = 0.0f;
        r.params.max_tokens = work_[i].output_len;
        r.params.ignore_eos = true;
        index[engine_.add_request(std::move(r))] = i;
      }
      while (engine_.has_unfinished()) {
        std::vector<RequestOutput> outs = engine_.step();
        const double t = elapsed();
        ++f.steps;
        for (const RequestOutput& o : outs) {
          const size_t i = index.at(o.request_id);
          if (count[i] == 0 && !o.new_token_ids.empty()) first[i] = t;
          count[i] += static_cast<uint32_t>(o.new_token_ids.size());
          if (o.finished) {
            done[i] = t;
            engine_.release(o.request_id);
          }
        }
        const plinth_kv_stats kv = engine_.stats().kv;
        const double usage = double(kv.num_used_blocks) / double(kv.num_blocks);
        const double waste = kv.num_allocated_slots > 0
                                 ? 1.0 - double(kv.num_used_slots) / double(kv.num_allocated_slots)
                                 : 0.0;
        const double dt = t - last;
        last = t;
        if (kv.num_allocated_slots > 0) {
          wsum += waste * dt;
          wt += dt;
        }
        usum += usage * dt;
        if (usage > f.peak_usage) {
          f.peak_usage = usage;
          f.waste_at_peak = waste;
        }
      }
    }
    f.wall = elapsed();
    f.waste_avg = wt > 0 ? wsum / wt : 0;
    f.usage_avg = f.wall > 0 ? usum / f.wall : 0;
    f.preemptions = engine_.stats().num_preemptions - pre0;
    for (size_t i = 0; i < work_.size(); ++i) {
      f.output_tokens += count[i];
      f.ttft.push_back(first[i]);
      if (count[i] > 1) f.tpot.push_back((done[i] - first[i]) / (count[i] - 1));
    }
    return f;
  }

 private:
  using clock = std::chrono::steady_clock;
  double elapsed() const { return std::chrono::duration<double>(clock::now() - t0_).count(); }
  Engine& engine_;
  const std::vector<Work>& work_;
  clock::time_point t0_;
};

void print(const std::vector<Figures>& all, size_t n) {
  std::printf(
      "\n| mode | wall s | requests/s | output tok/s | TTFT mean s | TTFT p99 s | TPOT mean ms | "
      "TPOT p99 ms | peak KV usage | KV usage avg | KV waste avg | KV waste at peak | "
      "preemptions |\n|---|---|---|---|---|---|---|---|---|---|---|---|---|\n");
  for (const Figures& f : all) {
    std::printf(
        "| %s | %.1f | %.3f | %.1f | %.2f | %.2f | %.1f | %.1f | %.1f%% | %.1f%% | %.2f%% | "
        "%.2f%% | %llu |\n",
        f.mode.c_str(), f.wall, double(n) / f.wall, double(f.output_tokens) / f.wall, mean(f.ttft),
        p99(f.ttft), 1e3 * mean(f.tpot), 1e3 * p99(f.tpot), 100 * f.peak_usage, 100 * f.usage_avg,
        100 * f.waste_avg, 100 * f.waste_at_peak, static_cast<unsigned long long>(f.preemptions));
  }
  auto find = [&](const char* m) -> const Figures* {
    for (const Figures& f : all)
      if (f.mode == m) return &f;
    return nullptr;
  };
  const Figures* c = find("continuous");
  for (const char* base : {"sequential", "static"}) {
    const Figures* b = find(base);
    if (c == nullptr || b == nullptr) continue;
    std::printf("continuous / %-10s: output tok/s x%.2f, requests/s x%.2f, mean TTFT x%.2f\n", base,
                (double(c->output_tokens) / c->wall) / (double(b->output_tokens) / b->wall),
                b->wall / c->wall, mean(c->ttft) / mean(b->ttft));
  }
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  CLI::App app{"bench_continuous: sequential vs static vs continuous batching on the real model"};
  app.add_option("--manifest", o.manifest, "Pipeline manifest")->capture_default_str();
  app.add_option("--requests", o.requests, "Requests per mode")->capture_default_str();
  app.add_option("--batch", o.batch, "Static batch size = continuous max_num_seqs")
      ->capture_default_str();
  app.add_option("--seed", o.seed, "Workload seed")->capture_default_str();
  app.add_option("--prompt-min", o.prompt_min)->capture_default_str();
  app.add_option("--prompt-max", o.prompt_max)->capture_default_str();
  app.add_option("--output-min", o.output_min)->capture_default_str();
  app.add_option("--output-max", o.output_max)->capture_default_str();
  app.add_option("--modes", o.modes, "Comma-separated subset of sequential,static,continuous")
      ->capture_default_str();
  CLI11_PARSE(app, argc, argv);
  try {
    HostContext context(make_stderr_logger(spdlog::level::warn));
    EngineHost::Options ho;
    ho.manifest = derived_manifest(o);
    auto host = EngineHost::load(ho, context);
    const std::vector<Work> work = make_workload(o, host->config().vocab_size);
    uint64_t in = 0, out = 0;
    for (const Work& w : work) {
      in += w.prompt.size();
      out += static_cast<uint64_t>(w.output_len);
    }
    const plinth_kv_stats kv = host->engine().stats().kv;
    std::printf(
        "bench_continuous: %d requests, prompt ~ U{%d..%d} (total %llu), output ~ "
        "U{%d..%d} (total %llu), seed %llu, B = max_num_seqs = %d, KV pool %u blocks\n",
        o.requests, o.prompt_min, o.prompt_max, static_cast<unsigned long long>(in), o.output_min,
        o.output_max, static_cast<unsigned long long>(out), static_cast<unsigned long long>(o.seed),
        o.batch, kv.num_blocks);
    Runner runner(host->engine(), work);
    std::vector<Figures> all;
    const size_t n = work.size();
    auto want = [&](const std::string& m) { return o.modes.find(m) != std::string::npos; };
    if (want("sequential")) {
      std::vector<std::vector<size_t>> g;
      for (size_t i = 0; i < n; ++i) g.push_back({i});
      all.push_back(runner.run("sequential", g));
      std::fprintf(stderr, "sequential: %.1f s\n", all.back().wall);
    }
    if (want("static")) {
      std::vector<std::vector<size_t>> g;
      for (size_t i = 0; i < n; i += static_cast<size_t>(o.batch)) {
        g.emplace_back();
        for (size_t k = i; k < std::min(n, i + static_cast<size_t>(o.batch)); ++k)
          g.back().push_back(k);
      }
      all.push_back(runner.run("static", g));
      std::fprintf(stderr, "static: %.1f s\n", all.back().wall);
    }
    if (want("continuous")) {
      std::vector<std::vector<size_t>> g(1);
      for (size_t i = 0; i < n; ++i) g[0].push_back(i);
      all.push_back(runner.run("continuous", g));
      std::fprintf(stderr, "continuous: %.1f s\n", all.back().wall);
    }
    print(all, n);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return 1;
  }
  return 0;
}
