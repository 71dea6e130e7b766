// bench_generate: prefill and decode tokens/s of the whole plinth pipeline on the real model
// (manifest → EngineHost → Engine::step, the path `plinth generate` takes), and the same three
// figures for llama.cpp on the same GGUF file, thread count and token ids, measured in the same run
// by tools/bench/llama_cpp_bench.py (llama-cpp-python). Prints figures and ratios; never fails on
// a time.
//
// Measurements (each the median over --runs after one warm-up run; min and max printed too):
//   prefill     one request, --prompt-tokens prompt ids, max_tokens 1:
//               tokens/s = prompt tokens / TTFT (add_request → first token sampled)
//   decode b1   one request, 16-token prompt, --decode-tokens generated (greedy, ignore_eos):
//               tokens/s = (generated - 1) / (last token time - first token time)
//   decode b16  16 such requests (distinct prompts) added at once. t0 = end of the first step
//               after which every request has its first token; t1 = end of the last step.
//               tokens/s = (tokens generated in steps after t0) / (t1 - t0)
//   first token (plinth only) TTFT of a 7-token prompt, max_tokens 1: cold = the first request
//               after EngineHost::load, warm = the median of one such request per run
// Each figure is also printed as a fraction of its roofline bound (bench/roofline): measured
// in-process before the engines run (DRAM triad and peaks, 3 runs) or read from --roofline FILE.
// --llama-cpp-lib DIR loads llama.cpp from DIR (LLAMA_CPP_LIB_PATH, e.g. the native build of
// tools/bench/build_llama_cpp.sh) instead of llama-cpp-python's own library.

#include <sys/wait.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>
#include <optional>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include <unistd.h>
#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "app/engine_host.hpp"
#include "bound_report.hpp"
#include "model/gguf.hpp"
#include "model_cost.hpp"
#include "roofline.hpp"
#include "runtime/host_context.hpp"
#include "runtime/logging.hpp"

namespace fs = std::filesystem;
using json = nlohmann::json;

namespace {

constexpr int kBatch = 16;            // sequences in the batched decode measurement
constexpr int kDecodePromptLen = 16;  // prompt tokens of each decode request
constexpr int32_t kFirstId = 100;     // prompt ids are drawn from [kFirstId, vocab)

struct Options {
  std::string manifest = PLINTH_SOURCE_DIR_FOR_BENCH "/manifests/cpu.json";
  std::string model;
  int threads = 2;
  int runs = 5;
  int prompt_tokens = 512;
  int decode_tokens = 64;
  bool llama_cpp = true;
  std::string python = "python3";
  std::string llama_cpp_lib;  // LLAMA_CPP_LIB_PATH for the llama.cpp side; empty: the package's
  std::string roofline;       // bench_roofline --json file; empty: measured in-process
  bool no_roofline = false;
};

/// Median, min and max of one measurement's runs, tokens/s.
struct Stat {
  std::vector<double> runs;
  double median() const {
    std::vector<double> v = runs;
    std::sort(v.begin(), v.end());
    const size_t n = v.size();
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
  }
  double min() const { return *std::min_element(runs.begin(), runs.end()); }
  double max() const { return *std::max_element(runs.begin(), runs.end()); }
};

/// Deterministic prompt ids: SplitMix64 (Steele et al. 2014) from `seed`, mapped to [lo, hi).
std::vector<int32_t> make_ids(uint64_t seed, int n, int32_t lo, int32_t hi) {
  std::vector<int32_t> ids(static_cast<size_t>(n));
  uint64_t s = seed;
  for (int32_t& id : ids) {
    uint64_t z = (s += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    z ^= z >> 31;
    id = lo + static_cast<int32_t>(z % static_cast<uint64_t>(hi - lo));
  }
  return ids;
}

double now_s() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

std::string read_file(const fs::path& path) {
  std::ifstream in(path);
  if (!in) throw std::runtime_error("cannot read " + path.string());
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::string load_average() {
  try {
    std::string s = read_file("/proc/loadavg");
    return s.substr(0, s.find(' ', s.find(' ', s.find(' ') + 1) + 1));
  } catch (const std::exception&) {
    return "n/a";
  }
}

/// Copies `o.manifest` to a temporary file with the backend's "threads" set to o.threads and the
/// model and library paths made absolute (they are relative to the manifest's folder).
/// Returns the temporary file and the model path to load.
std::pair<fs::path, fs::path> write_bench_manifest(const Options& o) {
  const fs::path manifest = fs::absolute(o.manifest);
  json doc = json::parse(read_file(manifest));
  const fs::path dir = manifest.parent_path();
  fs::path model;
  if (!o.model.empty()) {
    model = fs::absolute(o.model);
  } else if (doc.contains("model")) {
    model = dir / doc["model"].get<std::string>();
  } else {
    throw std::invalid_argument(manifest.string() + " names no model: pass --model FILE.gguf");
  }
  model = model.lexically_normal();
  doc["model"] = model.string();
  bool found_backend = false;
  for (json& plugin : doc.at("plugins")) {
    const std::string lib = plugin.value("library", "");
    const bool is_path =
        lib.find('/') != std::string::npos || (lib.size() > 3 && lib.ends_with(".so"));
    if (is_path && fs::path(lib).is_relative()) plugin["library"] = (dir / lib).string();
    if (plugin.value("kind", "") == "prefix_cache") {
      std::cerr << "warning: the manifest has a prefix_cache; repeated prompts may hit it\n";
    }
    if (plugin.value("kind", "") == "backend") {
      plugin["config"]["threads"] = o.threads;
      found_backend = true;
    }
  }
  if (!found_backend) throw std::invalid_argument(manifest.string() + " has no backend plugin");
  const fs::path out =
      fs::temp_directory_path() / ("plinth_bench_generate_" + std::to_string(getpid()) + ".json");
  std::ofstream(out) << doc.dump(2) << "\n";
  return {out, model};
}

/// Runs every queued request to completion.
void drain(plinth::Engine& engine) {
  while (engine.has_unfinished()) engine.step();
}

plinth::GenerationRequest greedy(std::vector<int32_t> prompt, int max_tokens) {
  plinth::GenerationRequest r;
  r.prompt = std::move(prompt);
  r.params.temperature = 0.0f;
  r.params.max_tokens = max_tokens;
  r.params.ignore_eos = true;
  return r;
}

/// prompt tokens / TTFT, tokens/s.
double run_prefill(plinth::Engine& engine, const std::vector<int32_t>& prompt) {
  const uint64_t id = engine.add_request(greedy(prompt, 1));
  drain(engine);
  const double ttft = engine.find(id)->timings().ttft();
  engine.release(id);
  return static_cast<double>(prompt.size()) / ttft;
}

/// TTFT of one request, seconds.
double first_token_seconds(plinth::Engine& engine, const std::vector<int32_t>& prompt) {
  const uint64_t id = engine.add_request(greedy(prompt, 1));
  drain(engine);
  const double ttft = engine.find(id)->timings().ttft();
  engine.release(id);
  return ttft;
}

/// (generated - 1) / (finished - first_token), tokens/s, one request.
/// `tokens` receives the greedy ids.
double run_decode_b1(plinth::Engine& engine, const std::vector<int32_t>& prompt, int n_gen,
                     std::vector<int32_t>& tokens) {
  const uint64_t id = engine.add_request(greedy(prompt, n_gen));
  drain(engine);
  const plinth::Sequence& seq = *engine.find(id);
  const plinth::SequenceTimings t = seq.timings();
  tokens.assign(seq.output().begin(), seq.output().end());
  engine.release(id);
  if (t.num_generated_tokens != static_cast<uint32_t>(n_gen)) {
    throw std::runtime_error("decode b1: generated " + std::to_string(t.num_generated_tokens) +
                             " tokens, expected " + std::to_string(n_gen));
  }
  return (t.num_generated_tokens - 1) / (t.finished - t.first_token);
}

/// Tokens generated after every request has its first token / wall time of those steps.
double run_decode_batch(plinth::Engine& engine, const std::vector<std::vector<int32_t>>& prompts,
                        int n_gen) {
  std::vector<uint64_t> ids;
  ids.reserve(prompts.size());
  for (const auto& p : prompts) ids.push_back(engine.add_request(greedy(p, n_gen)));
  auto generated = [&] {
    uint64_t n = 0;
    bool all_started = true;
    for (uint64_t id : ids) {
      const plinth::SequenceTimings& t = engine.find(id)->timings();
      n += t.num_generated_tokens;
      all_started = all_started && t.num_generated_tokens > 0;
    }
    return std::pair{n, all_started};
  };
  double t0 = 0;
  uint64_t n0 = 0;
  while (engine.has_unfinished()) {
    engine.step();
    if (t0 == 0) {
      auto [n, all_started] = generated();
      if (all_started) t0 = now_s(), n0 = n;
    }
  }
  const double t1 = now_s();
  const uint64_t n1 = generated().first;
  for (uint64_t id : ids) engine.release(id);
  if (n1 != prompts.size() * static_cast<uint64_t>(n_gen)) {
    throw std::runtime_error("decode batch: generated " + std::to_string(n1) +
                             " tokens, expected " + std::to_string(prompts.size() * n_gen));
  }
  return static_cast<double>(n1 - n0) / (t1 - t0);
}

/// Runs the llama.cpp script with the same ids; returns its JSON, or {"error": reason}.
json run_llama_cpp(const Options& o, const fs::path& model, const std::vector<int32_t>& prefill,
                   const std::vector<std::vector<int32_t>>& prompts) {
  const fs::path script = PLINTH_SOURCE_DIR_FOR_BENCH "/tools/bench/llama_cpp_bench.py";
  json spec = {
      {"model", model.string()},   {"threads", o.threads},      {"runs", o.runs},
      {"prefill_prompt", prefill}, {"decode_prompts", prompts}, {"decode_tokens", o.decode_tokens}};
  const fs::path spec_file =
      fs::temp_directory_path() / ("plinth_bench_llama_" + std::to_string(getpid()) + ".json");
  std::ofstream(spec_file) << spec.dump() << "\n";
  auto quote = [](const std::string& s) {
    std::string q = "'";
    for (char c : s) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
    return q + "'";
  };
  const std::string env =
      o.llama_cpp_lib.empty() ? "" : "LLAMA_CPP_LIB_PATH=" + quote(o.llama_cpp_lib) + " ";
  const std::string cmd =
      env + quote(o.python) + " " + quote(script.string()) + " < " + quote(spec_file.string());
  std::string out;
  int status = -1;
  if (FILE* pipe = popen(cmd.c_str(), "r")) {
    char buf[4096];
    while (size_t n = std::fread(buf, 1, sizeof buf, pipe)) out.append(buf, n);
    status = pclose(pipe);
  }
  fs::remove(spec_file);
  const size_t brace = out.rfind("\n{");
  const std::string last = brace == std::string::npos ? out : out.substr(brace + 1);
  try {
    json result = json::parse(last);
    if (result.is_object()) return result;
  } catch (const json::exception&) {
  }
  const int code = status >= 0 && WIFEXITED(status) ? WEXITSTATUS(status) : status;
  return {{"error", "`" + cmd + "` printed no result (exit code " + std::to_string(code) + ")"}};
}

std::string fmt(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f", v);
  return buf;
}

std::string cell(const Stat& s) {
  return fmt(s.median()) + " (" + fmt(s.min()) + "–" + fmt(s.max()) + ")";
}

Stat stat_from(const json& j) {
  Stat s;
  s.runs = j.at("runs").get<std::vector<double>>();
  return s;
}

/// The backend's "matmul" config of `o.manifest` ("auto" when absent, the plugin's default).
std::string manifest_matmul(const Options& o) {
  const json doc = json::parse(read_file(fs::absolute(o.manifest)));
  for (const json& plugin : doc.at("plugins")) {
    if (plugin.value("kind", "") == "backend" && plugin.contains("config")) {
      return plugin["config"].value("matmul", "auto");
    }
  }
  return "auto";
}

/// Each figure as a fraction of its roofline bound, plinth and llama.cpp (whose matmuls quantize
/// activations to int8, so the int8 peak bounds its prefill).
void print_bounds(const Options& o, const plinth::roofline::Bounds& bounds, const fs::path& model,
                  const Stat& pre, const Stat& b1, const Stat& bn, const json* lc) {
  namespace rl = plinth::roofline;
  const std::unique_ptr<plinth::GgufFile> file = plinth::GgufFile::open(model.string());
  const rl::ModelCost cost = rl::model_cost(*file);
  const bool int8 = rl::matmul_is_int8(manifest_matmul(o));
  rl::BenchShape shape;
  shape.prompt_tokens = o.prompt_tokens;
  shape.decode_context = kDecodePromptLen + o.decode_tokens / 2.0;
  shape.batch = kBatch;
  const rl::FigureBounds plinth_b = rl::figure_bounds(bounds, cost, int8, o.threads, shape);
  const rl::FigureBounds lc_b = rl::figure_bounds(bounds, cost, true, o.threads, shape);
  std::printf("\n%s", rl::describe_bounds(bounds, cost, int8, {o.threads}).c_str());
  std::printf(
      "fraction of the bound (tokens/s bound): prefill compute-bound, decode b1 DRAM-bound, "
      "decode b%d the slower of both; llama.cpp against the int8 peak\n\n",
      kBatch);
  std::printf("| measurement | plinth / bound | llama.cpp / bound |\n|---|---|---|\n");
  const std::string bname = "decode, batch " + std::to_string(kBatch);
  struct Row {
    std::string name;
    const Stat& plinth;
    double bound, lc_bound;
    const char* key;
  };
  for (const Row& r : {Row{"prefill", pre, plinth_b.prefill, lc_b.prefill, "prefill"},
                       Row{"decode, batch 1", b1, plinth_b.decode_b1, lc_b.decode_b1, "decode_b1"},
                       Row{bname, bn, plinth_b.decode_bn, lc_b.decode_bn, "decode_bN"}}) {
    const std::string lc_cell =
        lc ? rl::of_bound(stat_from(lc->at(r.key)).median(), r.lc_bound) : "n/a";
    std::printf("| %s | %s | %s |\n", r.name.c_str(),
                rl::of_bound(r.plinth.median(), r.bound).c_str(), lc_cell.c_str());
  }
}

int run(const Options& o) {
  std::optional<plinth::roofline::Bounds> bounds;
  if (!o.roofline.empty()) {
    bounds = plinth::roofline::load_bounds(o.roofline);
  } else if (!o.no_roofline) {
    plinth::roofline::MeasureOptions ro;
    ro.threads = {o.threads};
    ro.runs = 3;
    ro.cache_levels = false;
    bounds = plinth::roofline::measure_bounds(ro);
  }
  auto [manifest, model] = write_bench_manifest(o);
  plinth::HostContext context(plinth::make_stderr_logger(spdlog::level::warn));
  std::unique_ptr<plinth::EngineHost> host;
  try {
    plinth::EngineHost::Options load_options;
    load_options.manifest = manifest;
    load_options.model = model;
    host = plinth::EngineHost::load(load_options, context);
  } catch (...) {
    fs::remove(manifest);
    throw;
  }
  fs::remove(manifest);
  plinth::Engine& engine = host->engine();
  const auto vocab = static_cast<int32_t>(host->config().vocab_size);

  const std::vector<int32_t> prefill = make_ids(1, o.prompt_tokens, kFirstId, vocab);
  std::vector<std::vector<int32_t>> prompts;
  prompts.reserve(kBatch);
  for (int s = 0; s < kBatch; ++s) {
    prompts.push_back(make_ids(1000 + static_cast<uint64_t>(s), kDecodePromptLen, kFirstId, vocab));
  }

  std::printf("bench_generate: model %s, manifest %s, threads %d, runs %d (+1 warm-up)\n",
              model.string().c_str(), fs::absolute(o.manifest).string().c_str(), o.threads, o.runs);
  std::printf("load average before: %s\n", load_average().c_str());
  std::fflush(stdout);

  // Cold first token: the first request after EngineHost::load, a short prompt (what `plinth
  // generate --prompt` pays); warm: the same length later, other ids (no prefix-cache hit).
  constexpr int kShortPrompt = 7;
  const double cold_ttft = first_token_seconds(engine, make_ids(7, kShortPrompt, kFirstId, vocab));
  Stat pre, b1, bn, warm_ttft;
  std::vector<int32_t> b1_tokens;
  for (int r = 0; r <= o.runs; ++r) {  // run 0 is the warm-up
    const double p = run_prefill(engine, prefill);
    const double d1 = run_decode_b1(engine, prompts[0], o.decode_tokens, b1_tokens);
    const double dn = run_decode_batch(engine, prompts, o.decode_tokens);
    const double w = first_token_seconds(
        engine, make_ids(100 + static_cast<uint64_t>(r), kShortPrompt, kFirstId, vocab));
    if (r > 0) {
      pre.runs.push_back(p), b1.runs.push_back(d1), bn.runs.push_back(dn);
      warm_ttft.runs.push_back(w);
    }
  }
  std::printf(
      "plinth first token, %d-token prompt: cold %.1f ms (first request after load), warm %.1f "
      "ms (median of %d) = cold x%.2f warm\n",
      kShortPrompt, cold_ttft * 1e3, warm_ttft.median() * 1e3, o.runs,
      cold_ttft / warm_ttft.median());
  std::printf("load average after plinth: %s\n", load_average().c_str());
  std::fflush(stdout);
  host.reset();  // free the model and threads before llama.cpp runs

  json lc;
  if (o.llama_cpp) {
    lc = run_llama_cpp(o, model, prefill, prompts);
    std::printf("load average after llama.cpp: %s\n", load_average().c_str());
  }
  const bool have_lc = o.llama_cpp && !lc.contains("error");

  std::printf("\n");
  std::printf("prefill    = %d-token prompt, max_tokens 1: prompt tokens / TTFT\n",
              o.prompt_tokens);
  std::printf(
      "decode b1  = 1 request, %d-token prompt, %d tokens greedy: (generated - 1) / "
      "(last token time - first token time)\n",
      kDecodePromptLen, o.decode_tokens);
  std::printf(
      "decode b%d = %d requests at once, %d-token prompts, %d tokens each: tokens generated "
      "after every request has its first token / wall time from then to the last token\n",
      kBatch, kBatch, kDecodePromptLen, o.decode_tokens);
  std::printf("figures: median (min–max) over %d runs, tokens/s\n\n", o.runs);

  std::printf(
      "| measurement | plinth tok/s (median) | llama.cpp tok/s (median) | plinth / "
      "llama.cpp |\n|---|---|---|---|\n");
  struct Row {
    std::string name;
    const Stat& plinth;
    const char* key;
  };
  const std::string bname = "decode, batch " + std::to_string(kBatch);
  const std::string pname = "prefill (" + std::to_string(o.prompt_tokens) + "-token prompt)";
  for (const Row& row : {Row{pname, pre, "prefill"}, Row{"decode, batch 1", b1, "decode_b1"},
                         Row{bname, bn, "decode_bN"}}) {
    std::string lc_cell = "n/a", ratio = "n/a";
    if (have_lc) {
      const Stat l = stat_from(lc.at(row.key));
      lc_cell = cell(l);
      char buf[32];
      std::snprintf(buf, sizeof buf, "%.2f", row.plinth.median() / l.median());
      ratio = buf;
    }
    std::printf("| %s | %s | %s | %s |\n", row.name.c_str(), cell(row.plinth).c_str(),
                lc_cell.c_str(), ratio.c_str());
  }
  std::printf("\n");
  if (!o.llama_cpp) {
    std::printf("llama.cpp column skipped: --llama-cpp=false\n");
  } else if (!have_lc) {
    std::printf(
        "llama.cpp column skipped: %s (pip install llama-cpp-python==0.3.36, or build it natively "
        "with tools/bench/build_llama_cpp.sh and pass the --python and --llama-cpp-lib it "
        "prints)\n",
        lc["error"].get<std::string>().c_str());
  } else {
    std::printf("llama.cpp: llama-cpp-python %s, library %s, %s\n",
                lc.value("llama_cpp_version", "?").c_str(),
                o.llama_cpp_lib.empty() ? "the package's own" : o.llama_cpp_lib.c_str(),
                lc.value("system_info", "").c_str());
    // Both engines should do the same work: compare the greedy tokens of the batch-1 run.
    const auto lc_tokens = lc.value("decode_b1_tokens", std::vector<int32_t>{});
    size_t agree = 0;
    while (agree < b1_tokens.size() && agree < lc_tokens.size() &&
           b1_tokens[agree] == lc_tokens[agree]) {
      ++agree;
    }
    std::printf("greedy tokens of the batch-1 run: the first %zu of %zu agree with llama.cpp\n",
                agree, b1_tokens.size());
    const double bar = b1.median() / stat_from(lc.at("decode_b1")).median();
    std::printf("decode batch 1, plinth / llama.cpp = %.2f (first bar: 0.50)\n", bar);
  }
  if (bounds) print_bounds(o, *bounds, model, pre, b1, bn, have_lc ? &lc : nullptr);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    Options o;
    CLI::App app{
        "bench_generate: plinth vs llama.cpp prefill and decode tokens/s on the real model"};
    app.add_option("--manifest", o.manifest, "pipeline manifest")->capture_default_str();
    app.add_option("--model", o.model, "GGUF file (default: the manifest's model)");
    app.add_option("--threads", o.threads, "compute threads, both engines")
        ->check(CLI::Range(1, 1024))
        ->capture_default_str();
    app.add_option("--runs", o.runs, "timed runs (after one warm-up)")
        ->check(CLI::Range(1, 1000))
        ->capture_default_str();
    app.add_option("--prompt-tokens", o.prompt_tokens, "prefill prompt length")
        ->check(CLI::Range(1, 4000))
        ->capture_default_str();
    app.add_option("--decode-tokens", o.decode_tokens, "tokens generated per decode request")
        ->check(CLI::Range(2, 1000))
        ->capture_default_str();
    app.add_option("--llama-cpp", o.llama_cpp, "also measure llama.cpp (llama-cpp-python)")
        ->capture_default_str();
    app.add_option("--python", o.python, "Python interpreter for tools/bench/llama_cpp_bench.py")
        ->capture_default_str();
    app.add_option("--llama-cpp-lib", o.llama_cpp_lib,
                   "folder with the libllama.so for llama.cpp's side (LLAMA_CPP_LIB_PATH), e.g. "
                   "~/.cache/plinth/llama.cpp-0.3.36/build/bin from tools/bench/build_llama_cpp.sh")
        ->check(CLI::ExistingDirectory);
    app.add_option("--roofline", o.roofline,
                   "bounds from this bench_roofline --json file (default: measured in-process)")
        ->check(CLI::ExistingFile);
    app.add_flag("--no-roofline", o.no_roofline, "skip the bounds")->excludes("--roofline");
    CLI11_PARSE(app, argc, argv);
    return run(o);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "bench_generate: error: %s\n", e.what());
    return 1;
  } catch (...) {
    std::fprintf(stderr, "bench_generate: error: unknown exception\n");
    return 1;
  }
}
