// bench_continuous: the same workload run three ways in one process on one EngineHost —
//   sequential   one request at a time;
//   static       batches of B requests, the next batch starts only when all of the batch finished
//                (a batch waits for its longest member; finished members leave the paged KV and the
//                forward batch, so this baseline pays no padding compute — a generous baseline);
//   static-padded the same batches run the way static batching engines run them (HF
//                transformers' generate, FasterTransformer before in-flight batching): every member
//                keeps decoding until the longest has finished, its extra tokens discarded, so a
//                finished member still costs compute and KV; its output counts only its own
//                tokens, and its last token time is that of its own last token. Prompts are not
//                padded (those engines also pad prompts to the longest; not done here);
//   continuous   all requests queued at t = 0, the scheduler admits one as soon as a slot frees
//                (max_num_seqs = B).
// Workload (fixed seed), generation-heavy like the ShareGPT statistics quoted in the vLLM paper
// (Kwon et al., SOSP 2023: mean input 161, mean output 338 tokens): N requests, prompt length ~
// U{16..256} tokens, output length ~ U{16..512} tokens (means 136 and 264; std::mt19937_64 seeded
// with --seed, default 0, drawn prompt then output per request), prompt ids uniform in [100, vocab)
// from the same generator, greedy, ignore_eos (every request generates exactly its output length).
// Every request is queued at the start of its mode's run, so TTFT includes queueing: TTFT = first
// token − run start; TPOT = (finish − first token) / (output − 1). KV usage is sampled after every
// step: usage = used / total blocks, waste = 1 − used slots / allocated slots; time average
// (weighted by step time) and at peak usage. At the same samples, the waste a contiguous
// per-request reservation would have had (the PagedAttention paper's baseline): over the sequences
// holding KV blocks at that step, 1 − used slots / reserved slots, reserving for each sequence
// (a) min(prompt + --output-max, context) — a server knows max_tokens, not the output length, and
// the workload's largest output stands in for max_tokens — or (b) the model's context length;
// time averages weighted like the paged one.
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
#include <set>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include <unistd.h>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "app/engine_host.hpp"
#include "runtime/call.hpp"
#include "runtime/host_context.hpp"
#include "runtime/logging.hpp"
#include "runtime/plugin_search.hpp"

namespace fs = std::filesystem;
using namespace plinth;

namespace {

struct Options {
  std::string manifest = PLINTH_SOURCE_DIR_FOR_BENCH "/manifests/cpu.json";
  int requests = 128;
  int batch = 16;
  uint64_t seed = 0;
  int prompt_min = 16, prompt_max = 256, output_min = 16, output_max = 512;
  int block_size = 0;  // 0: the manifest's kv_cache block_size
  std::string modes = "sequential,static,static-padded,continuous";
};

const std::vector<std::string> kModes = {"sequential", "static", "static-padded", "continuous"};

// "a,b" → {"a", "b"} (empty items kept, so "a,,b" is refused).
std::vector<std::string> split_modes(const std::string& s) {
  std::vector<std::string> out;
  std::stringstream in(s);
  std::string item;
  while (std::getline(in, item, ',')) out.push_back(item);
  if (s.empty() || s.back() == ',') out.emplace_back();
  return out;
}

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

// The manifest with the scheduler's max_num_seqs set to `batch` (and the kv_cache's block_size to
// --block-size when given), written into a fresh private folder (mkdtemp, mode 0700) with the
// model path made absolute and every plugin library resolved as the host would resolve it for
// the user's manifest (its folder first), so nothing is looked up in the temp folder. Returns the
// file; the caller removes its folder. Throws std::runtime_error naming the user's manifest.
fs::path derived_manifest(const Options& o) {
  const fs::path src = fs::absolute(o.manifest);
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(std::ifstream(src));
    const fs::path dir = src.parent_path();
    if (j.contains("model")) j["model"] = (dir / j["model"].get<std::string>()).lexically_normal();
    for (auto& p : j.at("plugins")) {
      const std::string lib = p.at("library");
      if (const auto found = resolve_plugin(lib, dir)) p["library"] = found->string();
      if (p.at("kind") == "scheduler") p["config"]["max_num_seqs"] = o.batch;
      if (p.at("kind") == "kv_cache" && o.block_size > 0) p["config"]["block_size"] = o.block_size;
    }
  } catch (const nlohmann::json::exception& e) {
    throw std::runtime_error(src.string() + ": " + e.what() +
                             " (check it with: plinth manifest check " + src.string() + ")");
  }
  std::string tmpl = (fs::temp_directory_path() / "plinth_bench_continuous.XXXXXX").string();
  if (::mkdtemp(tmpl.data()) == nullptr) {
    throw std::runtime_error("cannot create a temp folder from " + tmpl + "; set TMPDIR");
  }
  fs::path out = fs::path(tmpl) / "manifest.json";
  std::ofstream(out) << j.dump(2);
  return out;
}

struct Figures {
  std::string mode;
  double wall = 0;
  uint64_t output_tokens = 0, steps = 0, preemptions = 0;
  std::vector<double> ttft, tpot;
  double peak_usage = 0, waste_at_peak = 0, waste_avg = 0, usage_avg = 0;
  // Contiguous reservation: prompt + --output-max per sequence, and the whole context.
  double cont_max_waste_avg = 0, cont_ctx_waste_avg = 0;
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
  // `kv`: the pipeline's kv_cache, asked which sequences hold blocks; `reserve_output`: the
  // output tokens a contiguous allocator reserves per request (--output-max); `context`: the
  // model's context length.
  Runner(Engine& e, KvCacheRef kv, const std::vector<Work>& w, uint32_t reserve_output,
         uint32_t context)
      : engine_(e), kv_(kv), work_(w), reserve_output_(reserve_output), context_(context) {}

  // Runs the requests in `groups` one group after another (each group submitted at once, the next
  // when it has finished). `padded`: every member of a group generates as many tokens as the
  // group's longest output (static batching's padding); only its own output_len tokens count.
  Figures run(const std::string& mode, const std::vector<std::vector<size_t>>& groups,
              bool padded = false) {
    Figures f;
    f.mode = mode;
    const uint64_t pre0 = engine_.stats().num_preemptions;
    RunState st(work_.size());
    t0_ = clock::now();
    for (const auto& g : groups) {
      submit(g, padded, st);
      while (engine_.has_unfinished()) {
        std::vector<RequestOutput> outs = engine_.step();
        const double t = elapsed();
        ++f.steps;
        record(outs, t, st);
        sample_kv(t, st, f);
      }
    }
    f.wall = elapsed();
    f.preemptions = engine_.stats().num_preemptions - pre0;
    summarise(st, f);
    return f;
  }

 private:
  using clock = std::chrono::steady_clock;

  // What one run collects per request and over its steps.
  struct RunState {
    explicit RunState(size_t n) : first(n, 0), done(n, 0), count(n, 0) {}
    std::map<uint64_t, size_t> index;   // request id → workload index
    std::vector<double> first, done;    // first token / own last token times, s from run start
    std::vector<uint32_t> count;        // own output tokens received (capped at output_len)
    std::set<uint64_t> live;            // submitted, not yet finished
    double last = 0;                    // time of the previous step
    double wsum = 0, wt = 0, usum = 0;  // paged waste × dt, its dt, usage × dt
    double cmax_sum = 0, cctx_sum = 0, ct = 0;  // contiguous waste × dt (both kinds), their dt
  };

  double elapsed() const { return std::chrono::duration<double>(clock::now() - t0_).count(); }

  // Submits every request of group `g` (max_tokens = the group's longest output when `padded`).
  void submit(const std::vector<size_t>& g, bool padded, RunState& st) {
    int32_t longest = 0;
    for (size_t i : g) longest = std::max(longest, work_[i].output_len);
    for (size_t i : g) {
      GenerationRequest r;
      r.prompt = work_[i].prompt;
      r.params.temperature = 0.0f;
      r.params.max_tokens = padded ? longest : work_[i].output_len;
      r.params.ignore_eos = true;
      const uint64_t id = engine_.add_request(std::move(r));
      st.index[id] = i;
      st.live.insert(id);
    }
  }

  // Counts one step's tokens per request (its own output_len at most), noting the time of its
  // first and its own last token, and releases the finished requests.
  void record(const std::vector<RequestOutput>& outs, double t, RunState& st) {
    for (const RequestOutput& o : outs) {
      const size_t i = st.index.at(o.request_id);
      if (st.count[i] == 0 && !o.new_token_ids.empty()) st.first[i] = t;
      const auto own = static_cast<uint32_t>(work_[i].output_len);
      const uint32_t before = st.count[i];
      st.count[i] = std::min(own, before + static_cast<uint32_t>(o.new_token_ids.size()));
      if (before < own && st.count[i] == own) st.done[i] = t;  // its own last token
      if (o.finished) {
        engine_.release(o.request_id);
        st.live.erase(o.request_id);
      }
    }
  }

  // Samples the KV usage and waste after the step that ended at `t`, weighted by its duration,
  // with the waste contiguous allocators would have had; tracks the peak usage.
  void sample_kv(double t, RunState& st, Figures& f) const {
    const plinth_kv_stats kv = engine_.stats().kv;
    const double usage = double(kv.num_used_blocks) / double(kv.num_blocks);
    const double waste = kv.num_allocated_slots > 0
                             ? 1.0 - double(kv.num_used_slots) / double(kv.num_allocated_slots)
                             : 0.0;
    const double dt = t - st.last;
    st.last = t;
    if (kv.num_allocated_slots > 0) {
      st.wsum += waste * dt;
      st.wt += dt;
    }
    st.usum += usage * dt;
    // What contiguous allocators would have reserved for the sequences holding KV now.
    uint64_t reserved_max = 0, reserved_ctx = 0;
    for (uint64_t id : st.live) {
      if (holds_kv(id)) {
        const uint64_t prompt = work_[st.index.at(id)].prompt.size();
        reserved_max += std::min<uint64_t>(prompt + reserve_output_, context_);
        reserved_ctx += context_;
      }
    }
    if (reserved_max > 0) {
      st.cmax_sum += (1.0 - double(kv.num_used_slots) / double(reserved_max)) * dt;
      st.cctx_sum += (1.0 - double(kv.num_used_slots) / double(reserved_ctx)) * dt;
      st.ct += dt;
    }
    if (usage > f.peak_usage) {
      f.peak_usage = usage;
      f.waste_at_peak = waste;
    }
  }

  // The run's averages and per-request TTFT / TPOT, once f.wall is set.
  void summarise(const RunState& st, Figures& f) const {
    f.waste_avg = st.wt > 0 ? st.wsum / st.wt : 0;
    f.usage_avg = f.wall > 0 ? st.usum / f.wall : 0;
    f.cont_max_waste_avg = st.ct > 0 ? st.cmax_sum / st.ct : 0;
    f.cont_ctx_waste_avg = st.ct > 0 ? st.cctx_sum / st.ct : 0;
    for (size_t i = 0; i < work_.size(); ++i) {
      f.output_tokens += st.count[i];
      f.ttft.push_back(st.first[i]);
      if (st.count[i] > 1) f.tpot.push_back((st.done[i] - st.first[i]) / (st.count[i] - 1));
    }
  }

  // True when the kv_cache has blocks for the sequence (request id = sequence id): admitted and
  // not preempted or finished.
  bool holds_kv(uint64_t id) const {
    const int32_t* blocks = nullptr;
    uint32_t num_blocks = 0;
    plinth_error err = make_error();
    const int32_t st = kv_.vtable->get_block_table(kv_.instance, id, &blocks, &num_blocks, &err);
    if (st == PLINTH_ERR_NOT_FOUND) return false;
    check(st, err, "kv_cache.get_block_table");
    return num_blocks > 0;
  }
  Engine& engine_;
  KvCacheRef kv_;
  const std::vector<Work>& work_;
  uint64_t reserve_output_;
  uint64_t context_;
  clock::time_point t0_;
};

void print(const std::vector<Figures>& all, size_t n) {
  std::printf(
      "\n| mode | wall s | requests/s | output tok/s | TTFT mean s | TTFT p99 s | TPOT mean ms | "
      "TPOT p99 ms | peak KV usage | KV usage avg | KV waste avg | KV waste at peak | "
      "contiguous waste (prompt+max_tokens) | contiguous waste (context) | preemptions |\n"
      "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n");
  for (const Figures& f : all) {
    std::printf(
        "| %s | %.1f | %.3f | %.1f | %.2f | %.2f | %.1f | %.1f | %.1f%% | %.1f%% | %.2f%% | "
        "%.2f%% | %.2f%% | %.2f%% | %llu |\n",
        f.mode.c_str(), f.wall, double(n) / f.wall, double(f.output_tokens) / f.wall, mean(f.ttft),
        p99(f.ttft), 1e3 * mean(f.tpot), 1e3 * p99(f.tpot), 100 * f.peak_usage, 100 * f.usage_avg,
        100 * f.waste_avg, 100 * f.waste_at_peak, 100 * f.cont_max_waste_avg,
        100 * f.cont_ctx_waste_avg, static_cast<unsigned long long>(f.preemptions));
  }
  auto find = [&](const char* m) -> const Figures* {
    for (const Figures& f : all)
      if (f.mode == m) return &f;
    return nullptr;
  };
  const Figures* c = find("continuous");
  for (const char* base : {"sequential", "static", "static-padded"}) {
    const Figures* b = find(base);
    if (c == nullptr || b == nullptr) continue;
    std::printf("continuous / %-13s: output tok/s x%.2f, requests/s x%.2f, mean TTFT x%.2f\n", base,
                (double(c->output_tokens) / c->wall) / (double(b->output_tokens) / b->wall),
                b->wall / c->wall, mean(c->ttft) / mean(b->ttft));
  }
}

// The command line's options, checked (ranges, --block-size a power of two, --modes known,
// min ≤ max) as CLI11 parses them.
void add_options(CLI::App& app, Options& o) {
  constexpr int kMaxLen = 1 << 20;  // tokens; the model's context is checked after loading it
  app.add_option("--manifest", o.manifest, "Pipeline manifest")
      ->check(CLI::ExistingFile)
      ->capture_default_str();
  app.add_option("--requests", o.requests, "Requests per mode")
      ->check(CLI::Range(1, 1000000))
      ->capture_default_str();
  app.add_option("--batch", o.batch, "Static batch size = continuous max_num_seqs")
      ->check(CLI::Range(1, 65536))
      ->capture_default_str();
  app.add_option("--seed", o.seed, "Workload seed")->capture_default_str();
  app.add_option("--prompt-min", o.prompt_min, "Shortest prompt, tokens")
      ->check(CLI::Range(1, kMaxLen))
      ->capture_default_str();
  app.add_option("--prompt-max", o.prompt_max, "Longest prompt, tokens")
      ->check(CLI::Range(1, kMaxLen))
      ->capture_default_str();
  app.add_option("--output-min", o.output_min, "Shortest output, tokens")
      ->check(CLI::Range(1, kMaxLen))
      ->capture_default_str();
  app.add_option("--output-max", o.output_max,
                 "Longest output, tokens; also the max_tokens a contiguous reservation assumes")
      ->check(CLI::Range(1, kMaxLen))
      ->capture_default_str();
  app.add_option("--block-size", o.block_size,
                 "kv_cache block_size written into the manifest copy (power of two, 1..256); "
                 "default: the manifest's")
      ->check(CLI::Range(1, 256))
      ->check(CLI::Validator(
          [](std::string& s) -> std::string {
            int v = 0;  // CLI::Range above has already checked it is an integer in 1..256
            if (!CLI::detail::lexical_cast(s, v)) return "block size " + s + " is not an integer";
            return (v & (v - 1)) == 0 ? "" : "block size " + s + " is not a power of two";
          },
          "POWER OF TWO"));
  app.add_option("--modes", o.modes,
                 "Comma-separated subset of sequential,static,static-padded,continuous")
      ->check(CLI::Validator(
          [](std::string& s) -> std::string {
            for (const std::string& m : split_modes(s)) {
              if (std::find(kModes.begin(), kModes.end(), m) == kModes.end()) {
                return "unknown mode '" + m +
                       "' (known: sequential, static, static-padded, continuous)";
              }
            }
            return "";
          },
          "MODES"))
      ->capture_default_str();
  app.callback([&] {
    if (o.prompt_min > o.prompt_max) {
      throw CLI::ValidationError("--prompt-min", std::to_string(o.prompt_min) +
                                                     " is greater than --prompt-max " +
                                                     std::to_string(o.prompt_max));
    }
    if (o.output_min > o.output_max) {
      throw CLI::ValidationError("--output-min", std::to_string(o.output_min) +
                                                     " is greater than --output-max " +
                                                     std::to_string(o.output_max));
    }
  });
}

// Loads the pipeline from the manifest copy (derived_manifest), removed once read. Returns null
// and sets `error` when it does not load, the error naming the user's manifest, not the copy.
std::unique_ptr<EngineHost> load_host(const Options& o, HostContext& context, std::string& error) {
  EngineHost::Options ho;
  ho.manifest = derived_manifest(o);
  std::unique_ptr<EngineHost> host;
  try {
    host = EngineHost::load(ho, context);
  } catch (const std::exception& e) {
    error = e.what();
    const std::string copy = ho.manifest.string(), mine = fs::absolute(o.manifest).string();
    for (size_t at = error.find(copy); at != std::string::npos;
         at = error.find(copy, at + mine.size())) {
      error.replace(at, copy.size(), mine);
    }
  }
  std::error_code ignored;
  fs::remove_all(ho.manifest.parent_path(), ignored);  // read once at load
  return host;
}

// The pool's geometry (kv_cache.get_info).
plinth_kv_info kv_info(const KvCacheRef& kv_ref) {
  plinth_kv_info info{};
  info.struct_size = sizeof(info);
  call("kv_cache.get_info",
       [&](plinth_error* e) { return kv_ref.vtable->get_info(kv_ref.instance, &info, e); });
  return info;
}

// Runs the modes `modes` asks for, in the order sequential, static, static-padded, continuous,
// printing each one's wall time to stderr.
std::vector<Figures> run_modes(Runner& runner, const std::vector<std::string>& modes, size_t n,
                               int batch) {
  std::vector<Figures> all;
  auto want = [&](const std::string& m) {
    return std::find(modes.begin(), modes.end(), m) != modes.end();
  };
  if (want("sequential")) {
    std::vector<std::vector<size_t>> g;
    for (size_t i = 0; i < n; ++i) g.push_back({i});
    all.push_back(runner.run("sequential", g));
    std::fprintf(stderr, "sequential: %.1f s\n", all.back().wall);
  }
  std::vector<std::vector<size_t>> batches;  // static batching's groups of B
  for (size_t i = 0; i < n; i += static_cast<size_t>(batch)) {
    batches.emplace_back();
    for (size_t k = i; k < std::min(n, i + static_cast<size_t>(batch)); ++k)
      batches.back().push_back(k);
  }
  for (const bool padded : {false, true}) {
    const std::string m = padded ? "static-padded" : "static";
    if (!want(m)) continue;
    all.push_back(runner.run(m, batches, padded));
    std::fprintf(stderr, "%s: %.1f s\n", m.c_str(), all.back().wall);
  }
  if (want("continuous")) {
    std::vector<std::vector<size_t>> g(1);
    for (size_t i = 0; i < n; ++i) g[0].push_back(i);
    all.push_back(runner.run("continuous", g));
    std::fprintf(stderr, "continuous: %.1f s\n", all.back().wall);
  }
  return all;
}

// The bench once the options are parsed: exit code 0, 1 (bad --prompt-max) or 2 (no pipeline).
int run_bench(const Options& o) {
  const std::vector<std::string> modes = split_modes(o.modes);
  HostContext context(make_stderr_logger(spdlog::level::warn));
  std::string load_error;
  const std::unique_ptr<EngineHost> host = load_host(o, context, load_error);
  if (!host) {
    std::fprintf(stderr, "error: %s\n", load_error.c_str());
    return 2;
  }
  const uint32_t ctx = host->config().context_length;
  if (static_cast<uint32_t>(o.prompt_max) >= ctx) {
    std::fprintf(stderr,
                 "error: --prompt-max: %d tokens, but the model's context holds %u; use at most "
                 "%u\n",
                 o.prompt_max, ctx, ctx - 1);
    return 1;
  }
  const std::vector<Work> work = make_workload(o, host->config().vocab_size);
  uint64_t in = 0, out = 0;
  for (const Work& w : work) {
    in += w.prompt.size();
    out += static_cast<uint64_t>(w.output_len);
  }
  const KvCacheRef kv_ref = host->pipeline().kv_cache();
  const plinth_kv_info info = kv_info(kv_ref);
  std::printf(
      "bench_continuous: %d requests, prompt ~ U{%d..%d} (total %llu), output ~ "
      "U{%d..%d} (total %llu), seed %llu, B = max_num_seqs = %d, KV pool %u blocks of %u "
      "tokens, context %u\n",
      o.requests, o.prompt_min, o.prompt_max, static_cast<unsigned long long>(in), o.output_min,
      o.output_max, static_cast<unsigned long long>(out), static_cast<unsigned long long>(o.seed),
      o.batch, info.num_blocks, info.block_size, ctx);
  Runner runner(host->engine(), kv_ref, work, static_cast<uint32_t>(o.output_max), ctx);
  print(run_modes(runner, modes, work.size(), o.batch), work.size());
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    Options o;
    CLI::App app{"bench_continuous: sequential vs static vs continuous batching on the real model"};
    add_options(app, o);
    CLI11_PARSE(app, argc, argv);
    return run_bench(o);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return 1;
  } catch (...) {
    std::fprintf(stderr, "error: unknown exception\n");
    return 1;
  }
}
