// bench_forward: tokens/s of backend_cpu's forward pass on a GGUF model.
//   prefill: one 512-token prompt in one batch (logits of the last token only)
//   decode:  32 steps of 1 new token per sequence for batch 1 and 16 sequences, each sequence
//            holding a 128-token context first (prefill untimed)
// Each figure is the median of --runs runs; printed for each thread count, then as a fraction of
// its roofline bound (bench/roofline: decode b1 against the DRAM triad rate / the model's weight
// bytes per token, prefill against the int8 or f32 peak / MACs per token); the bounds are measured
// in-process before the model runs, or read from --roofline FILE (bench_roofline --json FILE).
// Figures only, never pass/fail.
//   bench_forward [--model PATH] [--threads 1,2] [--runs 5]
//                 [--matmul float|int8|simd|auto|blas|simd_blas] [--kv-dtype f32|f16]
//                 [--roofline FILE | --no-roofline]
#include <CLI/CLI.hpp>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <memory>
#include <optional>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "bound_report.hpp"
#include "cpu_backend.hpp"
#include "model/gguf.hpp"
#include "model/model_desc.hpp"
#include "model_cost.hpp"
#include "roofline.hpp"

namespace {

constexpr uint32_t kBlockSize = 16;
constexpr int kPrefillTokens = 512;
constexpr int kContext = 128;
constexpr int kDecodeSteps = 32;

/// A batch of `seqs` sequences, each adding `n_new` tokens after `cached` ones; sequence i owns
/// blocks [i * blocks_per_seq, (i + 1) * blocks_per_seq).
struct Batch {
  std::vector<int32_t> tokens, positions, query_start, seq_lens, tables, slots, logits;
  plinth_batch b{};
  Batch(int seqs, int cached, int n_new, uint32_t blocks_per_seq, std::mt19937& rng, int vocab) {
    std::uniform_int_distribution<int32_t> tok(0, vocab - 1);
    query_start.push_back(0);
    for (int s = 0; s < seqs; ++s) {
      for (int k = 0; k < n_new; ++k) {
        const int pos = cached + k;
        const int32_t block = s * static_cast<int32_t>(blocks_per_seq) + pos / kBlockSize;
        tokens.push_back(tok(rng));
        positions.push_back(pos);
        slots.push_back(block * static_cast<int32_t>(kBlockSize) + pos % kBlockSize);
      }
      logits.push_back(static_cast<int32_t>(tokens.size()) - 1);
      query_start.push_back(static_cast<int32_t>(tokens.size()));
      seq_lens.push_back(cached + n_new);
      for (uint32_t j = 0; j < blocks_per_seq; ++j) {
        tables.push_back(s * static_cast<int32_t>(blocks_per_seq) + static_cast<int32_t>(j));
      }
    }
    b.struct_size = sizeof(b);
    b.num_tokens = static_cast<uint32_t>(tokens.size());
    b.num_seqs = static_cast<uint32_t>(seqs);
    b.token_ids = tokens.data();
    b.positions = positions.data();
    b.query_start = query_start.data();
    b.seq_lens = seq_lens.data();
    b.block_tables = tables.data();
    b.max_blocks_per_seq = blocks_per_seq;
    b.block_size = kBlockSize;
    b.slot_mapping = slots.data();
    b.num_logits = static_cast<uint32_t>(logits.size());
    b.logits_indices = logits.data();
  }
};

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.size() % 2 ? v[v.size() / 2] : 0.5 * (v[v.size() / 2 - 1] + v[v.size() / 2]);
}

double prefill_tps(plinth::cpu::CpuBackend& be, int vocab, int runs) {
  std::mt19937 rng(1);
  std::vector<double> tps;
  for (int r = 0; r < runs + 1; ++r) {  // run 0 warms up
    Batch batch(1, 0, kPrefillTokens, kPrefillTokens / kBlockSize, rng, vocab);
    const auto t0 = std::chrono::steady_clock::now();
    be.forward(batch.b);
    if (r > 0) tps.push_back(kPrefillTokens / seconds_since(t0));
  }
  return median(tps);
}

double decode_tps(plinth::cpu::CpuBackend& be, int seqs, int vocab, int runs) {
  std::mt19937 rng(2);
  const uint32_t blocks_per_seq = (kContext + kDecodeSteps + kBlockSize - 1) / kBlockSize;
  std::vector<double> tps;
  for (int r = 0; r < runs + 1; ++r) {
    Batch ctx(seqs, 0, kContext, blocks_per_seq, rng, vocab);
    be.forward(ctx.b);
    std::vector<Batch> steps;
    steps.reserve(kDecodeSteps);
    for (int k = 0; k < kDecodeSteps; ++k)
      steps.emplace_back(seqs, kContext + k, 1, blocks_per_seq, rng, vocab);
    const auto t0 = std::chrono::steady_clock::now();
    for (Batch& s : steps) be.forward(s.b);
    if (r > 0) tps.push_back(seqs * kDecodeSteps / seconds_since(t0));
  }
  return median(tps);
}

// ms per forward of `rows` new tokens of one sequence after kContext cached tokens, every row's
// logits: the shape of a speculative verification of rows - 1 draft tokens.
double verify_ms(plinth::cpu::CpuBackend& be, int rows, int vocab, int runs) {
  constexpr int kSteps = 16;
  std::mt19937 rng(3);
  const uint32_t blocks_per_seq = (kContext + kDecodeSteps + kBlockSize - 1) / kBlockSize;
  std::vector<double> ms;
  for (int r = 0; r < runs + 1; ++r) {  // run 0 warms up
    Batch ctx(1, 0, kContext, blocks_per_seq, rng, vocab);
    be.forward(ctx.b);
    Batch step(1, kContext, rows, blocks_per_seq, rng, vocab);
    step.logits.clear();
    step.logits.reserve(static_cast<size_t>(rows));
    for (int i = 0; i < rows; ++i) step.logits.push_back(i);
    step.b.num_logits = static_cast<uint32_t>(rows);
    step.b.logits_indices = step.logits.data();
    const auto t0 = std::chrono::steady_clock::now();
    for (int k = 0; k < kSteps; ++k) be.forward(step.b);
    if (r > 0) ms.push_back(seconds_since(t0) * 1000 / kSteps);
  }
  return median(ms);
}

// The bench itself; main catches what it throws (CLI11's set-up included).
int run(int argc, char** argv) {
  std::string model =
      std::string(PLINTH_SOURCE_DIR_FOR_BENCH) + "/models/SmolLM2-135M-Instruct.Q4_1.gguf";
  std::vector<int> threads = {1, 2};
  int runs = 5;
  std::string matmul = "float";  // the reference path (the plugin's default is "auto")
  std::string kv_dtype = "f32";  // the plugin's default
  CLI::App app{"bench_forward: backend_cpu prefill and decode tokens/s on the real model"};
  app.add_option("--model", model, "GGUF file")->check(CLI::ExistingFile)->capture_default_str();
  app.add_option("--threads", threads, "Thread counts to measure, comma-separated")
      ->delimiter(',')
      ->check(CLI::Range(1, 1024))
      ->capture_default_str();
  app.add_option("--runs", runs, "Runs per figure (the median is printed)")
      ->check(CLI::Range(1, 1000))
      ->capture_default_str();
  app.add_option("--matmul", matmul, "backend_cpu matmul path")
      ->check(CLI::IsMember({"float", "int8", "simd", "auto", "blas", "simd_blas"}))
      ->capture_default_str();
  app.add_option("--kv-dtype", kv_dtype, "backend_cpu KV cache element type")
      ->check(CLI::IsMember({"f32", "f16"}))
      ->capture_default_str();
  std::string roofline_file;
  bool no_roofline = false;
  app.add_option("--roofline", roofline_file,
                 "bounds from this bench_roofline --json file (default: measured in-process, "
                 "DRAM triad and peaks, 3 runs)")
      ->check(CLI::ExistingFile);
  app.add_flag("--no-roofline", no_roofline, "skip the bounds")->excludes("--roofline");
  std::vector<int> verify_rows;
  app.add_option("--verify-rows", verify_rows,
                 "also time one sequence forwarding R new tokens with every row's logits (a "
                 "verification of R - 1 drafts), for each R, comma-separated, as x one row")
      ->delimiter(',')
      ->check(CLI::Range(1, 64));
  CLI11_PARSE(app, argc, argv);
  try {
    std::optional<plinth::roofline::Bounds> bounds;
    if (!roofline_file.empty()) {
      bounds = plinth::roofline::load_bounds(roofline_file);
    } else if (!no_roofline) {
      plinth::roofline::MeasureOptions ro;
      ro.threads = threads;
      ro.runs = 3;
      ro.cache_levels = false;
      bounds = plinth::roofline::measure_bounds(ro);
    }
    const plinth::LoadedModel m = plinth::load_model(model);
    const int vocab = static_cast<int>(m.config.vocab_size);
    std::printf("model %s, matmul %s, kv_dtype %s, median of %d runs\n", model.c_str(),
                matmul.c_str(), kv_dtype.c_str(), runs);
    struct Figures {
      int threads;
      double prefill, decode_b1, decode_b16;
    };
    std::vector<Figures> figures;
    figures.reserve(threads.size());
    std::printf("%-8s %16s %16s %16s\n", "threads", "prefill512 t/s", "decode b1 t/s",
                "decode b16 t/s");
    for (int t : threads) {
      const std::string config = "{\"threads\": " + std::to_string(t) + ", \"matmul\": \"" +
                                 matmul + "\", \"kv_dtype\": \"" + kv_dtype + "\"}";
      plinth_create_args args{};
      args.struct_size = sizeof(args);
      args.config_json = config.c_str();
      args.model = m.desc->get();
      plinth::cpu::CpuBackend be(args);
      be.allocate_kv(16 * ((kContext + kDecodeSteps + kBlockSize - 1) / kBlockSize) +
                         kPrefillTokens / kBlockSize,
                     kBlockSize);
      const double p = prefill_tps(be, vocab, runs);
      const double d1 = decode_tps(be, 1, vocab, runs);
      const double d16 = decode_tps(be, 16, vocab, runs);
      std::printf("%-8d %16.1f %16.1f %16.1f\n", t, p, d1, d16);
      std::fflush(stdout);
      figures.push_back({t, p, d1, d16});
      if (!verify_rows.empty()) {
        const double one = verify_ms(be, 1, vocab, runs);
        std::printf("  verification shape, %d threads (1 sequence, %d cached tokens):\n", t,
                    kContext);
        for (int rows : verify_rows) {
          const double ms = verify_ms(be, rows, vocab, runs);
          std::printf("  %2d rows: %7.3f ms = x%.2f one row (each extra row x%.3f)\n", rows, ms,
                      ms / one, rows > 1 ? (ms / one - 1) / (rows - 1) : 0.0);
        }
        std::fflush(stdout);
      }
    }
    if (bounds) {
      const plinth::roofline::ModelCost cost = plinth::roofline::model_cost(*m.file);
      const bool int8 = plinth::roofline::matmul_is_int8(matmul);
      std::printf("\n%s", plinth::roofline::describe_bounds(*bounds, cost, int8, threads).c_str());
      std::printf(
          "fraction of the bound (tokens/s bound): prefill compute-bound, decode b1 "
          "DRAM-bound, decode b16 the slower of both\n");
      std::printf("%-8s %22s %22s %22s\n", "threads", "prefill512", "decode b1", "decode b16");
      plinth::roofline::BenchShape shape;
      shape.prompt_tokens = kPrefillTokens;
      shape.decode_context = kContext + (kDecodeSteps + 1) / 2.0;
      shape.batch = 16;
      for (const Figures& f : figures) {
        const plinth::roofline::FigureBounds fb =
            plinth::roofline::figure_bounds(*bounds, cost, int8, f.threads, shape);
        std::printf("%-8d %22s %22s %22s\n", f.threads,
                    plinth::roofline::of_bound(f.prefill, fb.prefill).c_str(),
                    plinth::roofline::of_bound(f.decode_b1, fb.decode_b1).c_str(),
                    plinth::roofline::of_bound(f.decode_b16, fb.decode_bn).c_str());
      }
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "bench_forward: %s\n", e.what());
    return 1;
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    return run(argc, argv);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "bench_forward: %s\n", e.what());
  } catch (...) {
    std::fprintf(stderr, "bench_forward: unknown exception\n");
  }
  return 1;
}
