// bench_prefix: the prefix cache ON (the manifest as given, default manifests/cpu_prefix.json) and
// OFF (the same manifest without its prefix_cache plugin, scheduler policy longest_prefix_first
// replaced by fcfs) on the same workloads, in one process: one EngineHost per mode, built once.
// Figures only, never pass/fail.
//
// Workloads (fixed seeds; token ids uniform in [100, vocab); greedy, ignore_eos, so every request
// generates exactly its output length):
//   shared  SGLang's generated-shared-prefix benchmark scaled down: --groups G × --questions Q
//           requests, each group a --system-tokens system prompt, each question U{--question-min
//           .. --question-max} tokens appended to it, --output-len tokens out; all queued at t = 0
//           in a shuffled order.
//   chat    --conversations C × --turns T: turn t sends the whole history (earlier prompts and the
//           tokens the engine generated for them) + a new message of U{--message-min ..
//           --message-max} tokens, --answer-len tokens out; a conversation's next turn is queued
//           when its previous turn finishes; the conversations run concurrently.
//   plain   --plain-requests independent prompts U{16..256}, outputs U{16..64}, all at t = 0: the
//           plugin's overhead at a 0% hit rate (repeated --plain-repeats times, ON and OFF
//           alternating, medians).
//   ttft    per group of `shared`, on an empty cache: the group's first question alone (cold),
//           then its second question alone right after (hit: its system prompt is cached in ON);
//           max_tokens 1. Medians over the groups. In OFF both are cold.
// Before each ON run the bench evicts every cached block (prefix_cache.evict), so a run starts on
// an empty cache and never hits blocks an earlier run left. TTFT = first token − the time the
// request was queued (includes queueing).
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <functional>
#include <limits>
#include <map>
#include <memory>
#include <random>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include <sys/resource.h>
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

constexpr int32_t kFirstId = 100;  // token ids are drawn from [kFirstId, vocab)
constexpr int kMaxLen = 1 << 20;   // tokens; the model's context is checked after loading it

struct Options {
  std::string manifest = PLINTH_SOURCE_DIR_FOR_BENCH "/manifests/cpu_prefix.json";
  uint64_t seed = 0;
  int groups = 8, questions = 16, system_tokens = 1000, question_min = 16, question_max = 48;
  int output_len = 16;
  int conversations = 8, turns = 4, message_min = 32, message_max = 64, answer_len = 32;
  int plain_requests = 64, plain_prompt_min = 16, plain_prompt_max = 256;
  int plain_output_min = 16, plain_output_max = 64;
  int repeats = 1, plain_repeats = 5;
  int num_blocks = 0;  // 0: the manifest's kv_cache sizing
  bool quick = false;
  std::string workloads = "shared,chat,plain,ttft";
};

const std::vector<std::string> kWorkloads = {"shared", "chat", "plain", "ttft"};

// "a,b" → {"a", "b"} (empty items kept, so "a,,b" is refused).
std::vector<std::string> split_list(const std::string& s) {
  std::vector<std::string> out;
  std::stringstream in(s);
  std::string item;
  while (std::getline(in, item, ',')) out.push_back(item);
  if (s.empty() || s.back() == ',') out.emplace_back();
  return out;
}

using Tokens = std::vector<int32_t>;

class Rng {
 public:
  explicit Rng(uint64_t seed) : g_(seed) {}
  int uni(int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(g_); }
  Tokens tokens(int n, uint32_t vocab) {
    Tokens t(static_cast<size_t>(n));
    for (int32_t& x : t) x = uni(kFirstId, static_cast<int>(vocab) - 1);
    return t;
  }
  std::mt19937_64& engine() { return g_; }

 private:
  std::mt19937_64 g_;
};

Tokens concat(const Tokens& a, const Tokens& b) {
  Tokens r = a;
  r.insert(r.end(), b.begin(), b.end());
  return r;
}

// ---- workloads (the same ids for ON and OFF) ----

struct Shared {
  std::vector<Tokens> system;                  // [group]
  std::vector<std::vector<Tokens>> questions;  // [group][question]
  std::vector<std::pair<int, int>> order;      // submission order: (group, question)
};

Shared make_shared(const Options& o, uint32_t vocab) {
  Rng r(o.seed);
  Shared s;
  for (int g = 0; g < o.groups; ++g) {
    s.system.push_back(r.tokens(o.system_tokens, vocab));
    s.questions.emplace_back();
    for (int q = 0; q < o.questions; ++q) {
      s.questions.back().push_back(r.tokens(r.uni(o.question_min, o.question_max), vocab));
      s.order.emplace_back(g, q);
    }
  }
  std::shuffle(s.order.begin(), s.order.end(), r.engine());
  return s;
}

std::vector<std::vector<Tokens>> make_messages(const Options& o, uint32_t vocab) {
  Rng r(o.seed + 1);
  std::vector<std::vector<Tokens>> m(static_cast<size_t>(o.conversations));
  for (auto& conv : m) {
    for (int t = 0; t < o.turns; ++t) {
      conv.push_back(r.tokens(r.uni(o.message_min, o.message_max), vocab));
    }
  }
  return m;
}

struct Plain {
  std::vector<Tokens> prompts;
  std::vector<int32_t> outputs;
};

Plain make_plain(const Options& o, uint32_t vocab) {
  Rng r(o.seed + 2);
  Plain p;
  for (int i = 0; i < o.plain_requests; ++i) {
    p.prompts.push_back(r.tokens(r.uni(o.plain_prompt_min, o.plain_prompt_max), vocab));
    p.outputs.push_back(r.uni(o.plain_output_min, o.plain_output_max));
  }
  return p;
}

// ---- manifests ----

// The manifest copies: ON (as given) and OFF (no prefix_cache entry; a longest_prefix_first
// scheduler policy becomes fcfs), both with the model path made absolute, every plugin library
// resolved as the host would resolve it for the user's manifest (its folder first) and the
// kv_cache's num_blocks set to --num-blocks when given, written into one fresh private folder
// (mkdtemp, mode 0700). The caller removes the folder. Throws std::runtime_error naming the
// user's manifest.
struct Derived {
  fs::path dir, on, off;
  std::vector<std::string> libraries;  // "kind: path" of the ON copy
};

Derived derived_manifests(const Options& o) {
  const fs::path src = fs::absolute(o.manifest);
  nlohmann::json on, off;
  Derived d;
  try {
    on = nlohmann::json::parse(std::ifstream(src));
    const fs::path dir = src.parent_path();
    if (on.contains("model")) {
      on["model"] = (dir / on["model"].get<std::string>()).lexically_normal();
    }
    bool has_prefix = false;
    for (auto& p : on.at("plugins")) {
      const std::string lib = p.at("library");
      if (const auto found = resolve_plugin(lib, dir)) p["library"] = found->string();
      if (p.at("kind") == "kv_cache" && o.num_blocks > 0) p["config"]["num_blocks"] = o.num_blocks;
      if (p.at("kind") == "prefix_cache") has_prefix = true;
      d.libraries.push_back(p.at("kind").get<std::string>() + ": " +
                            p.at("library").get<std::string>());
    }
    if (!has_prefix) {
      throw std::runtime_error(src.string() +
                               ": has no prefix_cache plugin, so ON and OFF would be the same "
                               "pipeline (use manifests/cpu_prefix.json)");
    }
    off = on;
    nlohmann::json kept = nlohmann::json::array();
    for (auto& p : off.at("plugins")) {
      if (p.at("kind") == "prefix_cache") continue;
      if (p.at("kind") == "scheduler" && p.contains("config") &&
          p["config"].value("policy", "") == "longest_prefix_first") {
        p["config"]["policy"] = "fcfs";
      }
      kept.push_back(p);
    }
    off["plugins"] = kept;
  } catch (const nlohmann::json::exception& e) {
    throw std::runtime_error(src.string() + ": " + e.what() +
                             " (check it with: plinth manifest check " + src.string() + ")");
  }
  std::string tmpl = (fs::temp_directory_path() / "plinth_bench_prefix.XXXXXX").string();
  if (::mkdtemp(tmpl.data()) == nullptr) {
    throw std::runtime_error("cannot create a temp folder from " + tmpl + "; set TMPDIR");
  }
  d.dir = tmpl;
  d.on = d.dir / "manifest_on.json";
  d.off = d.dir / "manifest_off.json";
  std::ofstream(d.on) << on.dump(2);
  std::ofstream(d.off) << off.dump(2);
  return d;
}

// ---- statistics ----

double mean(const std::vector<double>& v) {
  double s = 0;
  for (double x : v) s += x;
  return v.empty() ? 0 : s / static_cast<double>(v.size());
}
// Nearest rank: the smallest value with at least q of the values at or below it.
double percentile(std::vector<double> v, double q) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const double rank = std::ceil(q * static_cast<double>(v.size()));
  const size_t k = rank < 1 ? 0 : static_cast<size_t>(rank) - 1;
  return v[std::min(k, v.size() - 1)];
}
// The middle value (mean of the two middle ones for an even count).
double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

// CPU seconds this process has used (user + system, all threads): unlike wall time it does not
// count the time the machine's other jobs hold the cores.
double process_cpu_seconds() {
  rusage u{};
  ::getrusage(RUSAGE_SELF, &u);
  auto sec = [](const timeval& t) { return double(t.tv_sec) + 1e-6 * double(t.tv_usec); };
  return sec(u.ru_utime) + sec(u.ru_stime);
}

// ---- one mode: a host and its counters ----

struct Counters {
  uint64_t computed = 0, preemptions = 0;
  double metric_queries = 0, metric_hits = 0;
  plinth_prefix_stats prefix{};
};

class Mode {
 public:
  Mode(std::string name, std::unique_ptr<HostContext> context, std::unique_ptr<EngineHost> host)
      : name_(std::move(name)), context_(std::move(context)), host_(std::move(host)) {
    MetricsRegistry& m = context_->metrics();
    // The ids of the counters the scheduler (and the prefix cache) registered; registering an
    // existing name and type again returns its id. OFF has neither (they read 0).
    m_queries_ = m.register_metric("plinth_prefix_cache_queries_total", "", PLINTH_METRIC_COUNTER);
    m_hits_ = m.register_metric("plinth_prefix_cache_hits_total", "", PLINTH_METRIC_COUNTER);
  }

  const std::string& name() const { return name_; }
  EngineHost& host() { return *host_; }
  Engine& engine() { return host_->engine(); }
  bool has_prefix() const { return static_cast<bool>(host_->pipeline().prefix_cache()); }

  Counters counters() {
    Counters c;
    const EngineStats s = engine().stats();
    c.computed = s.num_computed_tokens;
    c.preemptions = s.num_preemptions;
    c.metric_queries = context_->metrics().value(m_queries_);
    c.metric_hits = context_->metrics().value(m_hits_);
    c.prefix.struct_size = sizeof(c.prefix);
    const PrefixCacheRef p = host_->pipeline().prefix_cache();
    if (p) {
      call("prefix_cache.get_stats",
           [&](plinth_error* e) { return p.vtable->get_stats(p.instance, &c.prefix, e); });
    }
    return c;
  }

  // Evicts every cached block (none is locked between runs). Returns how many.
  uint32_t flush() {
    const PrefixCacheRef p = host_->pipeline().prefix_cache();
    uint32_t n = 0;
    if (p) {
      call("prefix_cache.evict", [&](plinth_error* e) {
        return p.vtable->evict(p.instance, std::numeric_limits<uint32_t>::max(), &n, e);
      });
    }
    return n;
  }

 private:
  std::string name_;
  std::unique_ptr<HostContext> context_;
  std::unique_ptr<EngineHost> host_;
  int64_t m_queries_ = -1, m_hits_ = -1;
};

// What one run of one workload in one mode measured.
struct Figures {
  double wall = 0, cpu = 0;  // seconds: elapsed, and CPU time of the process
  uint64_t requests = 0, output_tokens = 0, short_outputs = 0;
  std::vector<double> ttft;
  uint64_t computed = 0, preemptions = 0, evicted = 0, plugin_inserted = 0;
  double metric_queries = 0, metric_hits = 0, plugin_queried = 0, plugin_hits = 0;
  double admitted_tokens = 0, admitted_hits = 0;  // at admission: the scheduler's counters
  std::vector<Tokens> outputs;                    // per request index

  double tok_s() const { return wall > 0 ? double(output_tokens) / wall : 0; }
  double req_s() const { return wall > 0 ? double(requests) / wall : 0; }
  double hit_rate() const { return admitted_tokens > 0 ? admitted_hits / admitted_tokens : 0; }
};

// Drives one mode's engine: requests are submitted with submit(); run() steps until nothing is
// left, calling `on_finish(index)` when a request finishes (it may submit more).
class Run {
 public:
  Run(Mode& m, size_t num_requests) : mode_(m), expected_(num_requests, 0) {
    f_.outputs.resize(num_requests);
    first_.assign(num_requests, -1);
    queued_.assign(num_requests, 0);
    start_ = mode_.counters();
    cpu0_ = process_cpu_seconds();
    t0_ = clock::now();
  }

  void submit(size_t index, Tokens prompt, int32_t output_len) {
    GenerationRequest r;
    r.prompt = std::move(prompt);
    r.params.temperature = 0.0f;
    r.params.max_tokens = output_len;
    r.params.ignore_eos = true;
    queued_[index] = elapsed();
    expected_[index] = output_len;
    index_[mode_.engine().add_request(std::move(r))] = index;
  }

  void run(const std::function<void(size_t)>& on_finish = {}) {
    Engine& e = mode_.engine();
    while (e.has_unfinished()) {
      const std::vector<RequestOutput> outs = e.step();
      const double t = elapsed();
      for (const RequestOutput& o : outs) {
        const size_t i = index_.at(o.request_id);
        Tokens& got = f_.outputs[i];
        if (got.empty() && !o.new_token_ids.empty()) first_[i] = t;
        got.insert(got.end(), o.new_token_ids.begin(), o.new_token_ids.end());
        if (o.finished) {
          e.release(o.request_id);
          index_.erase(o.request_id);
          if (on_finish) on_finish(i);
        }
      }
    }
  }

  const Tokens& output(size_t index) const { return f_.outputs[index]; }

  Figures finish() {
    f_.wall = elapsed();
    f_.cpu = process_cpu_seconds() - cpu0_;
    const Counters end = mode_.counters();
    f_.requests = f_.outputs.size();
    for (size_t i = 0; i < f_.outputs.size(); ++i) {
      f_.output_tokens += f_.outputs[i].size();
      if (f_.outputs[i].size() != static_cast<size_t>(expected_[i])) ++f_.short_outputs;
      f_.ttft.push_back(first_[i] - queued_[i]);
    }
    f_.computed = end.computed - start_.computed;
    f_.preemptions = end.preemptions - start_.preemptions;
    f_.metric_queries = end.metric_queries - start_.metric_queries;
    f_.metric_hits = end.metric_hits - start_.metric_hits;
    f_.plugin_queried = double(end.prefix.num_queried_tokens - start_.prefix.num_queried_tokens);
    f_.plugin_hits = double(end.prefix.num_hit_tokens - start_.prefix.num_hit_tokens);
    f_.evicted = end.prefix.num_evicted_blocks - start_.prefix.num_evicted_blocks;
    f_.plugin_inserted = end.prefix.num_inserted_blocks - start_.prefix.num_inserted_blocks;
    f_.admitted_tokens = f_.metric_queries;
    f_.admitted_hits = f_.metric_hits;
    return f_;
  }

 private:
  using clock = std::chrono::steady_clock;
  double elapsed() const { return std::chrono::duration<double>(clock::now() - t0_).count(); }
  Mode& mode_;
  Figures f_;
  std::vector<int32_t> expected_;
  std::vector<double> first_, queued_;
  std::map<uint64_t, size_t> index_;
  Counters start_;
  double cpu0_ = 0;
  clock::time_point t0_;
};

Figures run_shared(Mode& m, const Shared& s, int output_len) {
  m.flush();
  Run r(m, s.order.size());
  for (size_t i = 0; i < s.order.size(); ++i) {
    const auto [g, q] = s.order[i];
    r.submit(i, concat(s.system[size_t(g)], s.questions[size_t(g)][size_t(q)]), output_len);
  }
  r.run();
  return r.finish();
}

Figures run_chat(Mode& m, const std::vector<std::vector<Tokens>>& messages, int answer_len) {
  m.flush();
  const size_t convs = messages.size(), turns = messages.empty() ? 0 : messages[0].size();
  Run r(m, convs * turns);
  std::vector<Tokens> history(convs);  // prompt + answer of the conversation's last turn
  for (size_t c = 0; c < convs; ++c) {
    history[c] = concat(history[c], messages[c][0]);
    r.submit(c * turns, history[c], answer_len);
  }
  r.run([&](size_t i) {
    const size_t c = i / turns, t = i % turns;
    history[c] = concat(history[c], r.output(i));
    if (t + 1 < turns) {
      history[c] = concat(history[c], messages[c][t + 1]);
      r.submit(i + 1, history[c], answer_len);
    }
  });
  return r.finish();
}

Figures run_plain(Mode& m, const Plain& p) {
  m.flush();
  Run r(m, p.prompts.size());
  for (size_t i = 0; i < p.prompts.size(); ++i) r.submit(i, p.prompts[i], p.outputs[i]);
  r.run();
  return r.finish();
}

// TTFT alone, per group: [0] cold (empty cache), [1] a second question right after.
struct Alone {
  std::vector<double> cold, hit;
  std::vector<double> cold_computed, hit_computed;
};

// Group g in mode m: flush, its first question alone, then its second (the first again when the
// group has one question).
void run_alone(Mode& m, const Shared& s, size_t g, Alone& a) {
  m.flush();
  const size_t nq = s.questions[g].size();
  for (const size_t k : {size_t{0}, size_t{1}}) {
    Run r(m, 1);
    r.submit(0, concat(s.system[g], s.questions[g][k % nq]), 1);
    r.run();
    const Figures f = r.finish();
    (k == 0 ? a.cold : a.hit).push_back(f.ttft[0]);
    (k == 0 ? a.cold_computed : a.hit_computed).push_back(double(f.computed));
  }
}

// A short request and a flush, so that the first measured run pays no first-call costs.
void warm_up(Mode& m, uint32_t vocab) {
  Rng r(0x5eed);
  Run run(m, 1);
  run.submit(0, r.tokens(64, vocab), 8);
  run.run();
  run.finish();
  m.flush();
}

// ---- printing ----

// Per-column medians of repeated runs (one run: itself).
struct Row {
  double wall, cpu, tok_s, req_s, ttft_mean, ttft_p50, ttft_p99, computed, hit_rate, hit_tokens,
      evicted, preemptions, short_outputs;
  uint64_t requests;
};

Row row_of(const std::vector<Figures>& runs) {
  auto med = [&](const std::function<double(const Figures&)>& f) {
    std::vector<double> v;
    v.reserve(runs.size());
    for (const Figures& x : runs) v.push_back(f(x));
    return median(v);
  };
  Row r{};
  r.requests = runs.front().requests;
  r.wall = med([](const Figures& f) { return f.wall; });
  r.cpu = med([](const Figures& f) { return f.cpu; });
  r.tok_s = med([](const Figures& f) { return f.tok_s(); });
  r.req_s = med([](const Figures& f) { return f.req_s(); });
  r.ttft_mean = med([](const Figures& f) { return mean(f.ttft); });
  r.ttft_p50 = med([](const Figures& f) { return percentile(f.ttft, 0.50); });
  r.ttft_p99 = med([](const Figures& f) { return percentile(f.ttft, 0.99); });
  r.computed = med([](const Figures& f) { return double(f.computed); });
  r.hit_rate = med([](const Figures& f) { return f.hit_rate(); });
  r.hit_tokens = med([](const Figures& f) { return f.admitted_hits; });
  r.evicted = med([](const Figures& f) { return double(f.evicted); });
  r.preemptions = med([](const Figures& f) { return double(f.preemptions); });
  double shorts = 0;
  for (const Figures& f : runs) shorts += double(f.short_outputs);
  r.short_outputs = shorts;
  return r;
}

void print_header() {
  std::printf(
      "| mode | requests | wall s | CPU s | output tok/s | requests/s | TTFT mean s | TTFT p50 s | "
      "TTFT p99 s | tokens computed | prefix hit rate | prompt tokens hit | evicted blocks | "
      "preemptions |\n"
      "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n");
}

void print_row(const char* mode, const Row& r, bool prefix) {
  char hit[32] = "—", phit[32] = "—";
  if (prefix) {
    std::snprintf(hit, sizeof hit, "%.1f%%", 100 * r.hit_rate);
    std::snprintf(phit, sizeof phit, "%.0f", r.hit_tokens);
  }
  std::printf(
      "| %s | %llu | %.2f | %.2f | %.1f | %.3f | %.3f | %.3f | %.3f | %.0f | %s | %s | %.0f | %.0f "
      "|\n",
      mode, static_cast<unsigned long long>(r.requests), r.wall, r.cpu, r.tok_s, r.req_s,
      r.ttft_mean, r.ttft_p50, r.ttft_p99, r.computed, hit, phit, r.evicted, r.preemptions);
}

// Requests whose greedy output is the same token for token in both modes (first runs).
size_t same_outputs(const Figures& a, const Figures& b) {
  size_t n = 0;
  for (size_t i = 0; i < a.outputs.size() && i < b.outputs.size(); ++i) {
    n += a.outputs[i] == b.outputs[i];
  }
  return n;
}

struct Result {
  std::string name, description, load_after;
  std::vector<Figures> on, off;
};

// ON / OFF − 1 of a time (wall or CPU): of the medians, and the median, min and max over the
// runs paired by repeat (run back to back).
struct Overhead {
  double of_medians, paired_median, paired_min, paired_max;
};

Overhead overhead(const Result& r, double Figures::*time) {
  std::vector<double> on, off, pairs;
  for (size_t i = 0; i < r.on.size() && i < r.off.size(); ++i) {
    on.push_back(r.on[i].*time);
    off.push_back(r.off[i].*time);
    pairs.push_back(r.on[i].*time / r.off[i].*time - 1);
  }
  return {median(on) / median(off) - 1, median(pairs),
          *std::min_element(pairs.begin(), pairs.end()),
          *std::max_element(pairs.begin(), pairs.end())};
}

void print_result(const Result& r) {
  const Row on = row_of(r.on), off = row_of(r.off);
  const size_t n = r.on.size();
  std::printf("\n### %s: %s%s\n\n", r.name.c_str(), r.description.c_str(),
              n > 1 ? (" — medians of " + std::to_string(n) + " runs per mode").c_str() : "");
  print_header();
  print_row("ON", on, true);
  print_row("OFF", off, false);
  std::printf(
      "\nON / OFF: output tok/s x%.2f, requests/s x%.2f, mean TTFT x%.3f, tokens computed "
      "x%.3f, wall x%.3f, CPU time x%.3f\n",
      on.tok_s / off.tok_s, on.req_s / off.req_s, on.ttft_mean / off.ttft_mean,
      on.computed / off.computed, on.wall / off.wall, on.cpu / off.cpu);
  const Figures& a = r.on.front();
  std::printf(
      "ON counters (first run): plinth_prefix_cache_queries_total +%.0f, _hits_total +%.0f; "
      "plugin get_stats queried +%.0f, hit +%.0f tokens, inserted %llu blocks, evicted %llu; "
      "admissions: %.0f prompt tokens, %.0f hit\n",
      a.metric_queries, a.metric_hits, a.plugin_queried, a.plugin_hits,
      static_cast<unsigned long long>(a.plugin_inserted),
      static_cast<unsigned long long>(a.evicted), a.admitted_tokens, a.admitted_hits);
  std::printf("greedy outputs equal in ON and OFF (first runs): %zu of %zu requests\n",
              same_outputs(r.on.front(), r.off.front()), a.outputs.size());
  if (on.short_outputs + off.short_outputs > 0) {
    std::printf("WARNING: %.0f requests generated fewer tokens than asked\n",
                on.short_outputs + off.short_outputs);
  }
  std::printf("load average after the runs: %s\n", r.load_after.c_str());
  if (n > 1) {
    std::printf("wall s per run:");
    for (size_t i = 0; i < n; ++i) std::printf(" ON %.2f / OFF %.2f;", r.on[i].wall, r.off[i].wall);
    std::printf("\nCPU s per run:");
    for (size_t i = 0; i < n; ++i) std::printf(" ON %.2f / OFF %.2f;", r.on[i].cpu, r.off[i].cpu);
    std::printf("\n");
  }
}

// /proc/cpuinfo's first "model name" and which of the backend's ISA-relevant flags it lists.
std::string cpu_description() {
  std::ifstream in("/proc/cpuinfo");
  std::string line, model = "unknown CPU", flags;
  while (std::getline(in, line)) {
    const auto colon = line.find(':');
    if (colon == std::string::npos) continue;
    std::string key = line.substr(0, colon);
    key.erase(key.find_last_not_of(" \t") + 1);
    const std::string value = colon + 2 <= line.size() ? line.substr(colon + 2) : "";
    if (key == "model name" && model == "unknown CPU") model = value;
    if (key == "flags" && flags.empty()) flags = " " + value + " ";
  }
  std::string isa;
  for (const char* f : {"avx2", "fma", "f16c", "avx512f", "avx512bw", "avx512_vnni"}) {
    if (flags.find(std::string(" ") + f + " ") != std::string::npos) isa += std::string(" ") + f;
  }
  return model + " (" + std::to_string(::sysconf(_SC_NPROCESSORS_ONLN)) +
         " logical CPUs online; flags:" + (isa.empty() ? " none of avx2/avx512" : isa) + ")";
}

// The 1-, 5- and 15-minute load averages (the machine is shared; figures move with them).
std::string load_average() {
  std::ifstream in("/proc/loadavg");
  std::string a, b, c;
  if (!(in >> a >> b >> c)) return "n/a";
  return a + " " + b + " " + c;
}

std::string today() {
  const std::time_t t = std::time(nullptr);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%d %H:%M", std::localtime(&t));
  return buf;
}

// Whether a workload was chosen (--workloads).
using Wanted = std::function<bool(const std::string&)>;

// The command line into `o` (ranges and --quick's shrinking in CLI11's checks and callback).
void add_options(CLI::App& app, Options& o) {
  app.add_option("--manifest", o.manifest,
                 "Pipeline manifest with a prefix_cache plugin (ON); OFF is a copy without it")
      ->check(CLI::ExistingFile)
      ->capture_default_str();
  app.add_option("--seed", o.seed, "Workload seed")->capture_default_str();
  auto count = [&](const char* name, int& v, const char* help, int lo = 1, int hi = kMaxLen) {
    app.add_option(name, v, help)->check(CLI::Range(lo, hi))->capture_default_str();
  };
  count("--groups", o.groups, "shared: groups (system prompts)", 1, 100000);
  count("--questions", o.questions, "shared: questions per group", 1, 100000);
  count("--system-tokens", o.system_tokens, "shared: system prompt tokens per group");
  count("--question-min", o.question_min, "shared: shortest question, tokens");
  count("--question-max", o.question_max, "shared: longest question, tokens");
  count("--output-len", o.output_len, "shared: output tokens per request");
  count("--conversations", o.conversations, "chat: conversations", 1, 100000);
  count("--turns", o.turns, "chat: turns per conversation", 1, 100000);
  count("--message-min", o.message_min, "chat: shortest new user message, tokens");
  count("--message-max", o.message_max, "chat: longest new user message, tokens");
  count("--answer-len", o.answer_len, "chat: output tokens per turn");
  count("--plain-requests", o.plain_requests, "plain: requests", 1, 1000000);
  count("--plain-prompt-min", o.plain_prompt_min, "plain: shortest prompt, tokens");
  count("--plain-prompt-max", o.plain_prompt_max, "plain: longest prompt, tokens");
  count("--plain-output-min", o.plain_output_min, "plain: shortest output, tokens");
  count("--plain-output-max", o.plain_output_max, "plain: longest output, tokens");
  count("--repeats", o.repeats, "runs per mode of shared and chat (medians printed)", 1, 1000);
  count("--plain-repeats", o.plain_repeats, "runs per mode of plain (medians printed)", 1, 1000);
  app.add_option("--num-blocks", o.num_blocks,
                 "kv_cache num_blocks written into both manifest copies (pool pressure makes the "
                 "prefix cache evict); default: the manifest's sizing")
      ->check(CLI::Range(1, 16777216));
  app.add_flag("--quick", o.quick,
               "Smoke run: 2 groups x 8 questions, 256-token system prompts, 2 conversations x 2 "
               "turns, 8 plain requests, one run each (options given explicitly win)");
  app.add_option("--workloads", o.workloads, "Comma-separated subset of shared,chat,plain,ttft")
      ->check(CLI::Validator(
          [](std::string& s) -> std::string {
            for (const std::string& w : split_list(s)) {
              if (std::find(kWorkloads.begin(), kWorkloads.end(), w) == kWorkloads.end()) {
                return "unknown workload '" + w + "' (known: shared, chat, plain, ttft)";
              }
            }
            return "";
          },
          "WORKLOADS"))
      ->capture_default_str();
  app.callback([&] {
    if (o.quick) {
      auto shrink = [&](const char* name, int& v, int quick) {
        if (app.count(name) == 0) v = quick;
      };
      shrink("--groups", o.groups, 2);
      shrink("--questions", o.questions, 8);
      shrink("--system-tokens", o.system_tokens, 256);
      shrink("--conversations", o.conversations, 2);
      shrink("--turns", o.turns, 2);
      shrink("--plain-requests", o.plain_requests, 8);
      shrink("--plain-repeats", o.plain_repeats, 1);
      shrink("--repeats", o.repeats, 1);
    }
    auto ordered = [](const char* lo_name, int lo, const char* hi_name, int hi) {
      if (lo > hi) {
        throw CLI::ValidationError(
            lo_name, std::to_string(lo) + " is greater than " + hi_name + " " + std::to_string(hi));
      }
    };
    ordered("--question-min", o.question_min, "--question-max", o.question_max);
    ordered("--message-min", o.message_min, "--message-max", o.message_max);
    ordered("--plain-prompt-min", o.plain_prompt_min, "--plain-prompt-max", o.plain_prompt_max);
    ordered("--plain-output-min", o.plain_output_min, "--plain-output-max", o.plain_output_max);
  });
}

// Loads one manifest copy; errors name the user's manifest, not the copy.
std::unique_ptr<Mode> load_mode(const char* name, const fs::path& copy, const fs::path& manifest) {
  auto context = std::make_unique<HostContext>(make_stderr_logger(spdlog::level::warn));
  EngineHost::Options ho;
  ho.manifest = copy;
  try {
    auto host = EngineHost::load(ho, *context);
    return std::make_unique<Mode>(name, std::move(context), std::move(host));
  } catch (const std::exception& e) {
    std::string msg = e.what();
    const std::string c = copy.string(), mine = fs::absolute(manifest).string();
    for (size_t at = msg.find(c); at != std::string::npos; at = msg.find(c, at + mine.size())) {
      msg.replace(at, c.size(), mine);
    }
    throw std::runtime_error(std::string(name) + " pipeline: " + msg);
  }
}

// Whether prompts up to `prompt` tokens plus `output` fit the context; prints why not.
bool fits(const char* what, uint64_t prompt, uint64_t output, uint32_t ctx) {
  if (prompt + output > ctx) {
    std::fprintf(stderr,
                 "error: %s: prompts up to %llu tokens + %llu output exceed the model's "
                 "context of %u tokens\n",
                 what, static_cast<unsigned long long>(prompt),
                 static_cast<unsigned long long>(output), ctx);
    return false;
  }
  return true;
}

// Whether every chosen workload fits the model's context of `ctx` tokens.
bool workloads_fit(const Options& o, const Wanted& want, uint32_t ctx) {
  const uint64_t longest_shared = uint64_t(o.system_tokens) + uint64_t(o.question_max);
  const uint64_t longest_chat =
      uint64_t(o.turns) * uint64_t(o.message_max) + uint64_t(o.turns - 1) * o.answer_len;
  if ((want("shared") || want("ttft")) && !fits("shared", longest_shared, o.output_len, ctx)) {
    return false;
  }
  if (want("chat") && !fits("chat", longest_chat, o.answer_len, ctx)) return false;
  return !want("plain") || fits("plain", o.plain_prompt_max, o.plain_output_max, ctx);
}

// The set-up lines: date, CPU, configs, plugins, KV pools, model.
void print_setup(const Options& o, const Derived& d, Mode& on, Mode& off) {
  const uint32_t ctx = on.host().config().context_length;
  const uint32_t vocab = on.host().config().vocab_size;
  const KvCacheRef kv = on.host().pipeline().kv_cache();
  plinth_kv_info info{};
  info.struct_size = sizeof(info);
  call("kv_cache.get_info",
       [&](plinth_error* e) { return kv.vtable->get_info(kv.instance, &info, e); });
  const KvCacheRef kv_off = off.host().pipeline().kv_cache();
  plinth_kv_info info_off{};
  info_off.struct_size = sizeof(info_off);
  call("kv_cache.get_info",
       [&](plinth_error* e) { return kv_off.vtable->get_info(kv_off.instance, &info_off, e); });
  const PipelinePlugin* backend = on.host().pipeline().plugin(PLINTH_KIND_BACKEND);
  const PipelinePlugin* sched_on = on.host().pipeline().plugin(PLINTH_KIND_SCHEDULER);
  const PipelinePlugin* sched_off = off.host().pipeline().plugin(PLINTH_KIND_SCHEDULER);

  std::printf("bench_prefix: %s, manifest %s, seed %llu\n", today().c_str(),
              fs::absolute(o.manifest).lexically_normal().c_str(),
              static_cast<unsigned long long>(o.seed));
  std::printf("CPU: %s\n", cpu_description().c_str());
  std::printf("backend config: %s\n", backend != nullptr ? backend->config.dump().c_str() : "?");
  std::printf("scheduler config: ON %s; OFF %s\n",
              sched_on != nullptr ? sched_on->config.dump().c_str() : "?",
              sched_off != nullptr ? sched_off->config.dump().c_str() : "?");
  for (const std::string& l : d.libraries) std::printf("plugin %s\n", l.c_str());
  std::printf(
      "KV pool: ON %u blocks of %u tokens, OFF %u blocks of %u; model %s, context %u, "
      "vocab %u\n",
      info.num_blocks, info.block_size, info_off.num_blocks, info_off.block_size,
      on.host().model_name().c_str(), ctx, vocab);
  std::fflush(stdout);
}

// Runs `f` in both modes `repeats` times, alternating which mode goes first.
void run_both(Result& r, int repeats, Mode& on, Mode& off, const std::function<Figures(Mode&)>& f) {
  for (int i = 0; i < repeats; ++i) {
    Mode* first = i % 2 == 0 ? &on : &off;
    Mode* second = i % 2 == 0 ? &off : &on;
    for (Mode* m : {first, second}) {
      Figures fig = f(*m);
      std::fprintf(stderr, "%s %s run %d: %.1f s\n", r.name.c_str(), m->name().c_str(), i + 1,
                   fig.wall);
      (m == &on ? r.on : r.off).push_back(std::move(fig));
    }
  }
  r.load_after = load_average();
}

// The shared-prefix workload in both modes, printed.
Result shared_workload(const Options& o, const Shared& shared, Mode& on, Mode& off) {
  uint64_t prompt = 0;
  for (const auto& [g, q] : shared.order) {
    prompt += shared.system[size_t(g)].size() + shared.questions[size_t(g)][size_t(q)].size();
  }
  Result r;
  r.name = "shared";
  r.description = std::to_string(o.groups) + " groups x " + std::to_string(o.questions) +
                  " questions, system prompt " + std::to_string(o.system_tokens) +
                  " tokens, question U{" + std::to_string(o.question_min) + ".." +
                  std::to_string(o.question_max) + "}, output " + std::to_string(o.output_len) +
                  ", all at t = 0 shuffled (prompt tokens " + std::to_string(prompt) + ")";
  run_both(r, o.repeats, on, off, [&](Mode& m) { return run_shared(m, shared, o.output_len); });
  print_result(r);
  std::fflush(stdout);
  return r;
}

// The multi-turn chat workload in both modes, printed.
Result chat_workload(const Options& o, uint32_t vocab, Mode& on, Mode& off) {
  const auto messages = make_messages(o, vocab);
  Result r;
  r.name = "chat";
  r.description = std::to_string(o.conversations) + " conversations x " + std::to_string(o.turns) +
                  " turns, message U{" + std::to_string(o.message_min) + ".." +
                  std::to_string(o.message_max) + "}, answer " + std::to_string(o.answer_len) +
                  ", next turn queued when the previous finishes";
  run_both(r, o.repeats, on, off, [&](Mode& m) { return run_chat(m, messages, o.answer_len); });
  print_result(r);
  std::fflush(stdout);
  return r;
}

// The no-sharing workload in both modes, printed with the prefix cache's overhead.
Result plain_workload(const Options& o, uint32_t vocab, Mode& on, Mode& off) {
  const Plain plain = make_plain(o, vocab);
  Result r;
  r.name = "plain";
  r.description = std::to_string(o.plain_requests) + " independent prompts U{" +
                  std::to_string(o.plain_prompt_min) + ".." + std::to_string(o.plain_prompt_max) +
                  "}, output U{" + std::to_string(o.plain_output_min) + ".." +
                  std::to_string(o.plain_output_max) + "}, all at t = 0";
  run_both(r, o.plain_repeats, on, off, [&](Mode& m) { return run_plain(m, plain); });
  print_result(r);
  for (const auto& [what, time] :
       {std::pair{"wall time", &Figures::wall}, std::pair{"CPU time", &Figures::cpu}}) {
    const Overhead v = overhead(r, time);
    std::printf(
        "plain overhead, %s (ON / OFF - 1): %+.2f%% of the medians, %+.2f%% median of the %zu "
        "paired runs (min %+.2f%%, max %+.2f%%); target: under 2%%\n",
        what, 100 * v.of_medians, 100 * v.paired_median, r.on.size(), 100 * v.paired_min,
        100 * v.paired_max);
  }
  std::fflush(stdout);
  return r;
}

// One request alone per group, cold then hit, in both modes; returns ON's cold / hit TTFT.
double ttft_workload(const Options& o, const Shared& shared, Mode& on, Mode& off) {
  Alone a_on, a_off;
  for (size_t g = 0; g < shared.system.size(); ++g) {  // ON first for even groups
    for (const bool first_on : {g % 2 == 0, g % 2 != 0}) {
      run_alone(first_on ? on : off, shared, g, first_on ? a_on : a_off);
    }
  }
  std::fprintf(stderr, "ttft: done\n");
  std::printf(
      "\n### ttft: one request alone, max_tokens 1, system prompt %d tokens + a question; "
      "cold = a group's first question on an empty cache, then hit = its second question "
      "right after; medians (min-max) over %d groups, ON and OFF alternating\n\n",
      o.system_tokens, o.groups);
  std::printf(
      "| mode | cold TTFT ms | second TTFT ms | cold / second | tokens computed cold | "
      "tokens computed second |\n|---|---|---|---|---|---|\n");
  auto ms = [](const std::vector<double>& v) {
    char buf[96];
    std::snprintf(buf, sizeof buf, "%.1f (%.1f-%.1f)", 1e3 * median(v),
                  1e3 * *std::min_element(v.begin(), v.end()),
                  1e3 * *std::max_element(v.begin(), v.end()));
    return std::string(buf);
  };
  auto ttft_row = [&](const char* name, const Alone& a) {
    std::printf("| %s | %s | %s | x%.2f | %.0f | %.0f |\n", name, ms(a.cold).c_str(),
                ms(a.hit).c_str(), median(a.cold) / median(a.hit), median(a.cold_computed),
                median(a.hit_computed));
  };
  ttft_row("ON", a_on);
  ttft_row("OFF", a_off);
  std::printf(
      "\nTTFT alone, cold / hit (ON): x%.2f (target: >= 10x); OFF cold / ON hit: x%.2f; "
      "ON cold / OFF cold: x%.3f\n",
      median(a_on.cold) / median(a_on.hit), median(a_off.cold) / median(a_on.hit),
      median(a_on.cold) / median(a_off.cold));
  std::printf("load average after the runs: %s\n", load_average().c_str());
  return median(a_on.cold) / median(a_on.hit);
}

// The targets next to the measured ratios (figures, not pass/fail); ttft_ratio 0: not run.
void print_targets(const std::vector<Result>& results, double ttft_ratio) {
  std::printf("\n| target | measured |\n|---|---|\n");
  for (const Result& r : results) {
    const Row on_row = row_of(r.on), off_row = row_of(r.off);
    if (r.name == "shared") {
      std::printf("| shared: output tok/s ON / OFF >= 3x | x%.2f |\n",
                  on_row.tok_s / off_row.tok_s);
    }
    if (r.name == "plain") {
      const Overhead w = overhead(r, &Figures::wall), c = overhead(r, &Figures::cpu);
      std::printf(
          "| plain: overhead under 2%% of wall time | wall %+.2f%% (medians), %+.2f%% (median "
          "of %zu pairs); CPU time %+.2f%%, %+.2f%% |\n",
          100 * w.of_medians, 100 * w.paired_median, r.on.size(), 100 * c.of_medians,
          100 * c.paired_median);
    }
  }
  if (ttft_ratio > 0) {
    std::printf("| ttft: TTFT alone on a hit >= 10x lower than cold (ON) | x%.2f |\n", ttft_ratio);
  }
  std::printf("\n");
}

// Loads ON and OFF, runs the chosen workloads and prints them; the exit code.
int run(const Options& o) {
  const std::vector<std::string> workloads = split_list(o.workloads);
  const Wanted want = [&](const std::string& w) {
    return std::find(workloads.begin(), workloads.end(), w) != workloads.end();
  };
  const Derived d = derived_manifests(o);
  std::unique_ptr<Mode> on, off;
  std::string load_error;
  try {
    on = load_mode("ON", d.on, o.manifest);
    off = load_mode("OFF", d.off, o.manifest);
  } catch (const std::exception& e) {
    load_error = e.what();
  }
  std::error_code ignored;
  fs::remove_all(d.dir, ignored);  // read once at load
  if (!on || !off) {
    std::fprintf(stderr, "error: %s\n", load_error.c_str());
    return 2;
  }
  if (!on->has_prefix() || off->has_prefix()) {
    std::fprintf(stderr, "error: the ON pipeline must have a prefix cache and OFF none\n");
    return 2;
  }
  const uint32_t vocab = on->host().config().vocab_size;
  if (!workloads_fit(o, want, on->host().config().context_length)) return 1;
  print_setup(o, d, *on, *off);

  warm_up(*on, vocab);
  warm_up(*off, vocab);
  std::printf("load average before: %s\n", load_average().c_str());
  std::fflush(stdout);

  const Shared shared = make_shared(o, vocab);
  std::vector<Result> results;
  if (want("shared")) results.push_back(shared_workload(o, shared, *on, *off));
  if (want("chat")) results.push_back(chat_workload(o, vocab, *on, *off));
  if (want("plain")) results.push_back(plain_workload(o, vocab, *on, *off));
  const double ttft_ratio = want("ttft") ? ttft_workload(o, shared, *on, *off) : 0;
  print_targets(results, ttft_ratio);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    Options o;
    CLI::App app{
        "bench_prefix: prefix cache ON vs OFF on shared-prefix, multi-turn chat and "
        "no-sharing workloads, on the real model"};
    add_options(app, o);
    CLI11_PARSE(app, argc, argv);
    return run(o);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "bench_prefix: error: %s\n", e.what());
    return 1;
  } catch (...) {
    std::fprintf(stderr, "bench_prefix: error: unknown exception\n");
    return 1;
  }
}
