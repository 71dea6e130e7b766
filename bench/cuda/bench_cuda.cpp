// bench_cuda: backend_cuda (+ cuda_graph) on the synthetic SmolLM2 model through the normal
// pipeline (manifest JSON -> EngineHost -> Engine). For each gemm mode (invariant, fast) and graphs
// off (eager) / on: decode step time and tokens/s at batch 1, 8, 64, prefill tokens/s, the
// estimated capture time and graph memory per batch size, and the HBM roofline fraction (bf16
// weight bytes read per decode step / step time / 4.8 TB/s). Figures only, never pass/fail.
//
// Method per (mode, batch B): B prompts of --prompt-len random ids, greedy, ignore_eos,
// max_tokens = --decode-steps + 1, all queued at once. Engine step 1 is the prefill of all B
// prompts (prefill tok/s = B * prompt-len / its time); steps 2.. are decode steps of B sequences.
// The first decode step of a size also captures its graph when graphs are on (lazy capture), so
// capture time ~ first decode step - median decode step, and graph memory ~ the drop in device
// free memory (cuMemGetInfo) over that first step. The decode figure is the median of the others.
// Lines the plugins log about capture are printed as logged.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include <spdlog/sinks/ringbuffer_sink.h>
#include <spdlog/sinks/stdout_color_sinks.h>
#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "gpu_harness.hpp"

using namespace plinth;
using namespace plinth::gpu;
using clock_type = std::chrono::steady_clock;

namespace {

constexpr double kHbmBytesPerSecond = 4.8e12;  // H200 HBM3e, NVIDIA's figure

struct Options {
  std::string model = model_path();
  std::string json;
  std::vector<int> batches = {1, 8, 64};
  int prompt_len = 32;
  int decode_steps = 64;
  std::vector<std::string> gemms = {"invariant", "fast"};
};

double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v.size() % 2 ? v[v.size() / 2] : (v[v.size() / 2 - 1] + v[v.size() / 2]) / 2;
}

// bf16 bytes of every weight a decode step reads: all block matrices and norms, the final norm
// and the (tied) LM head; the embedding gather reads only B rows and is left out.
double weight_bytes_per_step(const ModelConfig& c) {
  const double h = c.hidden_size, q = double(c.n_heads) * c.head_dim,
               kv = double(c.n_kv_heads) * c.head_dim, f = c.ffn_size;
  const double per_layer = h * q + 2 * h * kv + q * h + 3 * h * f + 2 * h;
  return 2 * (c.n_layers * per_layer + h + h * double(c.vocab_size));
}

struct BatchFigures {
  int batch = 0;
  double prefill_s = 0, prefill_tok_s = 0;
  double first_decode_s = 0, decode_step_s = 0, decode_tok_s = 0;
  double capture_s_est = 0;
  double graph_mib_est = 0;
  double roofline = 0;
  bool complete = true;
};

BatchFigures run_batch(EngineHost& h, int b, const Options& o, double weight_bytes) {
  const auto prompts = random_prompts(size_t(b), o.prompt_len, o.prompt_len, h.config().vocab_size,
                                      500 + uint64_t(b));
  Engine& e = h.engine();
  for (const Tokens& p : prompts) {
    GenerationRequest r;
    r.prompt = p;
    r.params.temperature = 0.0f;
    r.params.max_tokens = o.decode_steps + 1;
    r.params.ignore_eos = true;
    e.add_request(std::move(r));
  }
  std::vector<double> steps;
  std::vector<uint64_t> free_before;
  uint64_t produced = 0;
  while (e.has_unfinished()) {
    free_before.push_back(device_memory().first);
    const auto t0 = clock_type::now();
    const auto outs = e.step();
    steps.push_back(std::chrono::duration<double>(clock_type::now() - t0).count());
    for (const RequestOutput& out : outs) {
      produced += out.new_token_ids.size();
      if (out.finished) e.release(out.request_id);
    }
  }
  BatchFigures f;
  f.batch = b;
  f.complete = produced == uint64_t(b) * uint64_t(o.decode_steps + 1) && steps.size() >= 3;
  if (steps.size() < 3) return f;
  f.prefill_s = steps[0];
  f.prefill_tok_s = double(b) * o.prompt_len / steps[0];
  f.first_decode_s = steps[1];
  f.decode_step_s = median(std::vector<double>(steps.begin() + 2, steps.end()));
  f.decode_tok_s = double(b) / f.decode_step_s;
  f.capture_s_est = std::max(0.0, f.first_decode_s - f.decode_step_s);
  if (free_before[1] != 0 && free_before.size() > 2 && free_before[2] != 0) {
    f.graph_mib_est = (double(free_before[1]) - double(free_before[2])) / (1 << 20);
  }
  f.roofline = weight_bytes / f.decode_step_s / kHbmBytesPerSecond;
  return f;
}

nlohmann::json to_json(const BatchFigures& f) {
  return {{"batch", f.batch},
          {"prefill_s", f.prefill_s},
          {"prefill_tok_s", f.prefill_tok_s},
          {"first_decode_step_s", f.first_decode_s},
          {"decode_step_s", f.decode_step_s},
          {"decode_tok_s", f.decode_tok_s},
          {"capture_s_estimate", f.capture_s_est},
          {"graph_mib_estimate", f.graph_mib_est},
          {"hbm_roofline_fraction", f.roofline},
          {"complete", f.complete}};
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  CLI::App app{"bench_cuda: backend_cuda decode/prefill figures, graphs on/off, gemm modes"};
  app.add_option("--model", o.model, "Synthetic bf16 GGUF (default $PLINTH_GPU_MODEL)");
  app.add_option("--json", o.json, "Write the figures as JSON here");
  app.add_option("--batches", o.batches, "Decode batch sizes")->delimiter(',');
  app.add_option("--prompt-len", o.prompt_len, "Prompt tokens per request")->capture_default_str();
  app.add_option("--decode-steps", o.decode_steps, "Decode steps per batch")->capture_default_str();
  app.add_option("--gemm", o.gemms, "gemm modes to run")->delimiter(',');
  CLI11_PARSE(app, argc, argv);

  const std::string problem = cuda_device_problem();
  nlohmann::json report = {{"bench", "bench_cuda"}, {"model", o.model}};
  auto finish = [&](int code) {
    if (!o.json.empty()) std::ofstream(o.json) << report.dump(2) << "\n";
    return code;
  };
  if (!problem.empty()) {
    std::printf("%s\n", problem.c_str());
    report["skipped"] = problem;
    return finish(77);
  }
  if (o.model.empty()) {
    std::fprintf(stderr, "error: --model: give the synthetic model (or set PLINTH_GPU_MODEL)\n");
    return 2;
  }
  try {
    auto ring = std::make_shared<spdlog::sinks::ringbuffer_sink_mt>(4096);
    auto err = std::make_shared<spdlog::sinks::stderr_color_sink_mt>();
    err->set_level(spdlog::level::warn);
    auto logger =
        std::make_shared<spdlog::logger>("bench_cuda", spdlog::sinks_init_list{err, ring});
    logger->set_level(spdlog::level::info);
    nlohmann::json runs = nlohmann::json::array();
    std::printf(
        "| gemm | graphs | batch | prefill tok/s | decode step ms | decode tok/s | first "
        "decode step ms | capture ms (est.) | graph MiB (est.) | HBM roofline |\n"
        "|---|---|---|---|---|---|---|---|---|---|\n");
    for (const std::string& gemm : o.gemms) {
      for (const bool graphs : {false, true}) {
        const int max_b = *std::max_element(o.batches.begin(), o.batches.end());
        LoadedHost h = load_host(
            manifest(o.model, cuda_backend(gemm, 0.5), graphs, uint32_t(std::max(64, max_b))),
            logger);
        const double wbytes = weight_bytes_per_step(h.host->config());
        // Warm-up (module load, cuBLAS init): one token = a prefill step only, so no decode graph
        // is captured here and each batch size's capture falls in its own run_batch.
        generate(*h.host, random_prompts(1, 4, 4, h.host->config().vocab_size, 1), 1);
        nlohmann::json run = {{"gemm", gemm},
                              {"graphs", graphs},
                              {"load_s", h.load_seconds},
                              {"weight_bytes_per_step", wbytes}};
        nlohmann::json rows = nlohmann::json::array();
        for (const int b : o.batches) {
          const BatchFigures f = run_batch(*h.host, b, o, wbytes);
          std::printf("| %s | %s | %d | %.0f | %.3f | %.0f | %.3f | %.2f | %.1f | %.1f%% |\n",
                      gemm.c_str(), graphs ? "on" : "off", b, f.prefill_tok_s,
                      1e3 * f.decode_step_s, f.decode_tok_s, 1e3 * f.first_decode_s,
                      1e3 * f.capture_s_est, f.graph_mib_est, 100 * f.roofline);
          std::fflush(stdout);
          rows.push_back(to_json(f));
        }
        run["batches"] = rows;
        runs.push_back(run);
      }
    }
    // What the plugins logged about graphs, as logged.
    nlohmann::json logged = nlohmann::json::array();
    for (const std::string& line : ring->last_formatted()) {
      if (line.find("captur") != std::string::npos || line.find("graph") != std::string::npos) {
        std::printf("log: %s", line.c_str());
        logged.push_back(line);
      }
    }
    report["runs"] = runs;
    report["graph_log"] = logged;
    report["hbm_bytes_per_second"] = kHbmBytesPerSecond;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    report["error"] = e.what();
    return finish(1);
  }
  return finish(0);
}
