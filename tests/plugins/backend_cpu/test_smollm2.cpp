// backend_cpu on the real model: greedy continuations and top-5 logits of SmolLM2-135M-Instruct
// Q4_1 against tests/fixtures/golden/smollm2_greedy.json (the NumPy float64 reference of
// tools/reference/, cross-checked with llama.cpp). All prompts run as one batch of sequences on
// shuffled blocks, then decode together, feeding the fixture's greedy ids (its step definition).
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <memory>
#include <nlohmann/json.hpp>
#include <numeric>
#include <random>

#include "backend_harness.hpp"
#include "model/model_desc.hpp"

namespace {

using harness::BatchBuilder;
using harness::SeqStep;

const std::string kModel =
    std::string(PLINTH_SOURCE_DIR) + "/models/SmolLM2-135M-Instruct.Q4_1.gguf";
const std::string kGolden =
    std::string(PLINTH_SOURCE_DIR) + "/tests/fixtures/golden/smollm2_greedy.json";
constexpr uint32_t kBlockSize = 16;

struct StepStats {
  int compared_ids = 0;
  int agreeing_ids = 0;
  double max_greedy_logit_diff = 0.0;
  double max_top_logit_diff = 0.0;
};

// Runs every prompt of the fixture through `config`; checks greedy ids (where the fixture's
// margin exceeds twice `tol`), the chosen token's logit at every step and the top-5 logits at
// the fixture's top_steps, all within `tol`.
StepStats run_golden(const std::string& config, double tol) {
  std::ifstream in(kGolden);
  const nlohmann::json golden = nlohmann::json::parse(in);
  const auto prompts = golden.at("prompts");
  const int n_gen = golden.at("n_generate").get<int>();
  const plinth::LoadedModel model = plinth::load_model(kModel);
  harness::Library lib;
  harness::Backend be(lib, *model.desc->get(), config);

  // Shuffled, interleaved block ids for all sequences.
  std::vector<std::vector<int32_t>> blocks(prompts.size());
  size_t need = 0;
  for (const auto& p : prompts) {
    need += (p.at("prompt_ids").size() + static_cast<size_t>(n_gen) + kBlockSize - 1) / kBlockSize;
  }
  std::vector<int32_t> ids(need + 7);
  std::iota(ids.begin(), ids.end(), 0);
  std::shuffle(ids.begin(), ids.end(), std::mt19937(1234));
  be.allocate(static_cast<uint32_t>(ids.size()), kBlockSize);
  size_t next = 0;
  for (size_t i = 0; i < prompts.size(); ++i) {
    const size_t n =
        (prompts[i].at("prompt_ids").size() + static_cast<size_t>(n_gen) + kBlockSize - 1) /
        kBlockSize;
    blocks[i].assign(ids.begin() + static_cast<long>(next),
                     ids.begin() + static_cast<long>(next + n));
    next += n;
  }

  StepStats st;
  for (int step = 0; step < n_gen; ++step) {
    std::vector<SeqStep> steps;
    for (size_t i = 0; i < prompts.size(); ++i) {
      const auto prompt = prompts[i].at("prompt_ids").get<std::vector<int32_t>>();
      const auto greedy = prompts[i].at("greedy_ids").get<std::vector<int32_t>>();
      if (step == 0) {
        steps.push_back({blocks[i], 0, prompt, false});
      } else {
        steps.push_back({blocks[i],
                         static_cast<int32_t>(prompt.size()) + step - 1,
                         {greedy[static_cast<size_t>(step - 1)]},
                         false});
      }
    }
    BatchBuilder bb(steps, kBlockSize);
    const auto logits = be.forward(bb.batch);
    EXPECT_EQ(logits.size(), prompts.size());
    for (size_t i = 0; i < prompts.size() && i < logits.size(); ++i) {
      const auto& p = prompts[i];
      const std::string where = p.at("name").get<std::string>() + " step " + std::to_string(step);
      const auto& row = logits[i];
      const auto want_id = p.at("greedy_ids")[static_cast<size_t>(step)].get<int32_t>();
      const double margin = p.at("greedy_margin")[static_cast<size_t>(step)].get<double>();
      const int32_t got_id =
          static_cast<int32_t>(std::max_element(row.begin(), row.end()) - row.begin());
      if (margin > 2 * tol) {
        ++st.compared_ids;
        st.agreeing_ids += got_id == want_id;
        EXPECT_EQ(got_id, want_id) << where << " (margin " << margin << ")";
      }
      const double dg = std::fabs(row[static_cast<size_t>(want_id)] -
                                  p.at("greedy_logits")[static_cast<size_t>(step)].get<double>());
      st.max_greedy_logit_diff = std::max(st.max_greedy_logit_diff, dg);
      EXPECT_LE(dg, tol) << where << ": logit of the greedy token";
      for (const auto& t : p.at("top")) {
        if (t.at("step").get<int>() != step) continue;
        for (const auto& pair : t.at("top")) {
          const auto id = pair[0].get<size_t>();
          const double d = std::fabs(row[id] - pair[1].get<double>());
          st.max_top_logit_diff = std::max(st.max_top_logit_diff, d);
          EXPECT_LE(d, tol) << where << ": top-5 logit of token " << id;
        }
      }
    }
  }
  return st;
}

class SmolLM2 : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!std::filesystem::exists(kModel))
      GTEST_SKIP() << "model absent: " << kModel << " (fetch it with tools/fetch_model)";
    if (!std::filesystem::exists(kGolden)) GTEST_SKIP() << "golden fixture absent: " << kGolden;
  }
};

// f32-accurate path: the fixture's recommended float32 tolerance.
TEST_F(SmolLM2, BlasPathMatchesTheFloat64Reference) {
  std::ifstream in(kGolden);
  const double tol = nlohmann::json::parse(in)
                         .at("tolerance")
                         .at("recommended_float32_max_abs_logit_diff")
                         .get<double>();
  const StepStats st = run_golden(R"({"matmul": "blas", "threads": 2})", tol);
  std::printf("blas: greedy ids %d/%d, max |Δ greedy logit| %.3g, max |Δ top-5 logit| %.3g\n",
              st.agreeing_ids, st.compared_ids, st.max_greedy_logit_diff, st.max_top_logit_diff);
}

}  // namespace

namespace {

// Float path (f32 activations, batch-invariant): the same strict tolerance.
TEST_F(SmolLM2, FloatPathMatchesTheFloat64Reference) {
  std::ifstream in(kGolden);
  const double tol = nlohmann::json::parse(in)
                         .at("tolerance")
                         .at("recommended_float32_max_abs_logit_diff")
                         .get<double>();
  const StepStats st = run_golden(R"({"matmul": "float", "threads": 2})", tol);
  std::printf("float: greedy ids %d/%d, max |Δ greedy logit| %.3g, max |Δ top-5 logit| %.3g\n",
              st.agreeing_ids, st.compared_ids, st.max_greedy_logit_diff, st.max_top_logit_diff);
}

// The simd path (int8-quantized activations, as llama.cpp): held to llama.cpp's own distance from
// the reference, as recorded in the fixture.
TEST_F(SmolLM2, SimdPathStaysWithinLlamaCppDistance) {
  std::ifstream in(kGolden);
  const double tol = nlohmann::json::parse(in)
                         .at("tolerance")
                         .at("llama_cpp_q4_1_max_abs_logit_diff_all_steps")
                         .get<double>();
  const StepStats st = run_golden(R"({"matmul": "simd", "threads": 2})", tol);
  std::printf("simd: greedy ids %d/%d, max |Δ greedy logit| %.3g, max |Δ top-5 logit| %.3g\n",
              st.agreeing_ids, st.compared_ids, st.max_greedy_logit_diff, st.max_top_logit_diff);
}

// The int8 path (the same activation quantization, VNNI integer dots), with f32 and with f16 KV
// (manifests/cpu.json on a CPU with int8 kernels, llama.cpp's default numerics): the same
// distance.
TEST_F(SmolLM2, Int8PathStaysWithinLlamaCppDistance) {
  std::ifstream in(kGolden);
  const double tol = nlohmann::json::parse(in)
                         .at("tolerance")
                         .at("llama_cpp_q4_1_max_abs_logit_diff_all_steps")
                         .get<double>();
  for (const char* config : {R"({"matmul": "int8", "threads": 2})",
                             R"({"matmul": "int8", "kv_dtype": "f16", "threads": 2})"}) {
    SCOPED_TRACE(config);
    const StepStats st = run_golden(config, tol);
    std::printf("%s: greedy ids %d/%d, max |Δ greedy logit| %.3g, max |Δ top-5 logit| %.3g\n",
                config, st.agreeing_ids, st.compared_ids, st.max_greedy_logit_diff,
                st.max_top_logit_diff);
  }
}

}  // namespace

namespace {

// docs/architecture.md, 'Batch invariance', on the real model: the last-position logits of a long
// prompt (plain_long) are bit-identical whether it is prefilled at once, in chunks of 16
// (decode-sized steps at the end), or batched next to another prompt, with the backend `config`.
void expect_logits_independent_of_batching(const char* config) {
  SCOPED_TRACE(config);
  std::ifstream in(kGolden);
  const nlohmann::json golden = nlohmann::json::parse(in);
  std::vector<int32_t> a, b;
  for (const auto& p : golden.at("prompts")) {
    if (p.at("name") == "plain_long") a = p.at("prompt_ids").get<std::vector<int32_t>>();
    if (p.at("name") == "chat_multiturn") b = p.at("prompt_ids").get<std::vector<int32_t>>();
  }
  ASSERT_FALSE(a.empty());
  ASSERT_GT(a.size(), 60u);
  ASSERT_LE(a.size(), 144u);
  ASSERT_LE(b.size(), 112u);
  ASSERT_FALSE(b.empty());
  const plinth::LoadedModel model = plinth::load_model(kModel);
  harness::Library lib;
  const std::vector<int32_t> blocks_a = {3, 11, 7, 0, 9, 14, 2, 13, 12};  // up to 144 tokens
  const std::vector<int32_t> blocks_b = {1, 4, 5, 6, 8, 10, 15};          // up to 112 tokens

  const auto run = [&](const std::vector<size_t>& chunks, bool with_b) {
    harness::Backend be(lib, *model.desc->get(), config);
    be.allocate(16, kBlockSize);
    EXPECT_LE(a.size(), blocks_a.size() * kBlockSize);
    EXPECT_LE(b.size(), blocks_b.size() * kBlockSize);
    size_t at = 0;
    std::vector<float> last;
    for (size_t c : chunks) {
      std::vector<SeqStep> steps = {{blocks_a, static_cast<int32_t>(at),
                                     std::vector<int32_t>(a.begin() + static_cast<long>(at),
                                                          a.begin() + static_cast<long>(at + c)),
                                     false}};
      if (with_b && at == 0) steps.push_back({blocks_b, 0, b, false});
      BatchBuilder bb(steps, kBlockSize);
      last = be.forward(bb.batch).at(0);
      at += c;
    }
    EXPECT_EQ(at, a.size());
    return last;
  };
  const auto one = run({a.size()}, false);
  std::vector<size_t> sixteen(a.size() / 16, 16);
  for (size_t i = 0; i < a.size() % 16; ++i) sixteen.push_back(1);
  EXPECT_EQ(run(sixteen, false), one) << "chunks of 16, then single tokens";
  EXPECT_EQ(run({a.size()}, true), one) << "batched with another prompt";
  EXPECT_EQ(run({60, a.size() - 60}, true), one) << "two chunks, the first batched";
}

TEST_F(SmolLM2, DefaultAndFloatPathLogitsDoNotDependOnBatching) {
  expect_logits_independent_of_batching(R"({"threads": 2})");  // matmul auto
  expect_logits_independent_of_batching(R"({"threads": 2, "matmul": "float"})");
}

TEST_F(SmolLM2, Int8PathLogitsDoNotDependOnBatching) {
  expect_logits_independent_of_batching(R"({"threads": 2, "matmul": "int8"})");
  expect_logits_independent_of_batching(R"({"threads": 2, "matmul": "int8", "kv_dtype": "f16"})");
}

}  // namespace

namespace {

// plinth.early_exit/1 on the real model (30 layers): the logits of the model cut after 15 or 29
// layers have the forward's shape, are finite, and differ from the whole model's; a full forward
// after an early exit at the same slots is bit-identical to the full forward alone.
TEST_F(SmolLM2, EarlyExitGivesFiniteLogitsOfTheCutModel) {
  std::ifstream in(kGolden);
  const nlohmann::json golden = nlohmann::json::parse(in);
  const auto prompt = golden.at("prompts").at(0).at("prompt_ids").get<std::vector<int32_t>>();
  ASSERT_FALSE(prompt.empty());
  ASSERT_LE(prompt.size(), 4 * kBlockSize);
  const plinth::LoadedModel model = plinth::load_model(kModel);
  harness::Library lib;
  harness::Backend be(lib, *model.desc->get(), R"({"threads": 2})");
  be.allocate(8, kBlockSize);
  const uint32_t n_layers = be.early_exit().num_layers(be.inst());
  ASSERT_EQ(n_layers, model.config.n_layers);
  ASSERT_EQ(n_layers, 30u);
  BatchBuilder bb({{{6, 2, 5, 1}, 0, prompt, false}}, kBlockSize);
  bb.logits_indices = {0, static_cast<int32_t>(prompt.size() / 2),
                       static_cast<int32_t>(prompt.size()) - 1};
  bb.batch.num_logits = 3;
  bb.point();
  const auto full = be.forward(bb.batch);
  ASSERT_EQ(full.size(), 3u);
  const auto finite = [](const std::vector<std::vector<float>>& rows) {
    for (const auto& r : rows) {
      if (!std::all_of(r.begin(), r.end(), [](float v) { return std::isfinite(v); })) return false;
    }
    return true;
  };
  for (uint32_t exit_layer : {15u, n_layers - 1}) {
    SCOPED_TRACE("exit_layer " + std::to_string(exit_layer));
    const auto cut = be.forward_early_exit(bb.batch, exit_layer);
    ASSERT_EQ(cut.size(), 3u);
    for (const auto& r : cut) ASSERT_EQ(r.size(), model.config.vocab_size);
    EXPECT_TRUE(finite(cut));
    if (exit_layer == 15u) {
      for (size_t i = 0; i < cut.size(); ++i) {
        float d = 0.0f;
        for (size_t v = 0; v < cut[i].size(); ++v)
          d = std::max(d, std::fabs(cut[i][v] - full[i][v]));
        EXPECT_GT(d, 1e-2f) << "row " << i;
      }
    }
  }
  EXPECT_TRUE(finite(full));
  EXPECT_EQ(be.forward(bb.batch), full) << "full forward after early exits at the same slots";
}

}  // namespace
