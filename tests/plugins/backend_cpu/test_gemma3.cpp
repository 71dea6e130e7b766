// backend_cpu on the real Gemma 3 270M Q4_K_M file (tools/fetch_model --model gemma3-270m)
// against natively built llama.cpp 0.3.36 on the same file, teacher-forced
// (tests/fixtures/golden/gemma3_270m_llama_cpp.json, written by tools/reference/real_llama_cpp.py):
// each fixture sequence (a prompt tokenized by llama.cpp + llama.cpp's greedy continuation) is
// prefilled with logits at every recorded position (one prompt is longer than the model's
// 512-token sliding window: its first part is prefilled in a chunk of its own, the rest, where
// the local layers' window has slid, with logits), and plinth's greedy id must equal llama.cpp's
// at every position where llama.cpp's top-1/top-2 margin exceeds kClearMargin — on
// the int8 path with an f16 KV cache (manifests/cpu.json) and on the float path with f32 KV
// (manifests/cpu_float.json). llama.cpp quantizes activations for its dot products with the
// K-quant weights, so it is no tight oracle: below the margin either id is a fair answer.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "backend_harness.hpp"
#include "model/model_desc.hpp"

namespace {

using harness::BatchBuilder;
using harness::SeqStep;

const std::string kModel = std::string(PLINTH_SOURCE_DIR) + "/models/gemma-3-270m-q4_k_m.gguf";
const std::string kFixture =
    std::string(PLINTH_SOURCE_DIR) + "/tests/fixtures/golden/gemma3_270m_llama_cpp.json";
constexpr uint32_t kBlockSize = 16;
// llama.cpp's top-1/top-2 logit margin above which its greedy id is taken as the answer. The
// largest |plinth - llama.cpp| difference over llama.cpp's top-5 logits measured on this fixture
// is printed by each test (see the README of tools/reference for the figures).
constexpr double kClearMargin = 0.5;

struct Agreement {
  int positions = 0;
  int compared = 0;
  int agreeing = 0;
  int agreeing_anywhere = 0;            // positions of any margin with equal ids
  double max_disagreeing_margin = 0.0;  // largest llama.cpp margin where the ids differ
  double max_top5_diff = 0.0;           // max |plinth - llama.cpp| over llama.cpp's top-5 logits
};

Agreement run_fixture(const nlohmann::json& fixture, const std::string& config) {
  const plinth::LoadedModel model = plinth::load_model(kModel);
  harness::Library lib;
  harness::Backend be(lib, *model.desc->get(), config);
  size_t blocks = 0;
  for (const auto& p : fixture.at("prompts")) {
    blocks = std::max(blocks, (p.at("ids").size() + kBlockSize - 1) / kBlockSize);
  }
  be.allocate(static_cast<uint32_t>(blocks), kBlockSize);
  Agreement a;
  for (const auto& p : fixture.at("prompts")) {
    const auto ids = p.at("ids").get<std::vector<int32_t>>();
    const auto first = p.at("first").get<size_t>();  // the first recorded position
    SeqStep s;
    for (size_t b = 0; b * kBlockSize < ids.size(); ++b) s.blocks.push_back(static_cast<int>(b));
    if (first > 0) {  // the unrecorded start, in a chunk of its own
      s.tokens.assign(ids.begin(), ids.begin() + static_cast<std::ptrdiff_t>(first));
      BatchBuilder head({s}, kBlockSize);
      (void)be.forward(head.batch);
    }
    s.cached = static_cast<int32_t>(first);
    s.tokens.assign(ids.begin() + static_cast<std::ptrdiff_t>(first), ids.end());
    s.all_logits = true;
    BatchBuilder bb({s}, kBlockSize);
    const auto rows = be.forward(bb.batch);
    const auto& top1 = p.at("top1");
    EXPECT_EQ(rows.size(), ids.size() - first);
    for (size_t t = 0; t < top1.size() && t < rows.size(); ++t, ++a.positions) {
      const std::vector<float>& row = rows[t];
      for (const auto& pair : p.at("top")[t]) {
        const double d = std::fabs(row.at(pair[0].get<size_t>()) - pair[1].get<double>());
        a.max_top5_diff = std::max(a.max_top5_diff, d);
      }
      const double margin = p.at("margin")[t].get<double>();
      const auto best = std::max_element(row.begin(), row.end()) - row.begin();
      const bool same = best == top1[t].get<int64_t>();
      a.agreeing_anywhere += same ? 1 : 0;
      if (!same) a.max_disagreeing_margin = std::max(a.max_disagreeing_margin, margin);
      if (margin <= kClearMargin) continue;
      ++a.compared;
      a.agreeing += same ? 1 : 0;
      EXPECT_EQ(best, top1[t].get<int64_t>()) << p.at("name").get<std::string>() << ", position "
                                              << t << " (llama.cpp margin " << margin << ")";
    }
  }
  return a;
}

class Gemma3 : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!std::filesystem::exists(kModel)) {
      GTEST_SKIP() << "model absent: " << kModel
                   << " (fetch it with tools/fetch_model --model gemma3-270m)";
    }
    std::ifstream in(kFixture);
    ASSERT_TRUE(in) << kFixture << " is missing (tools/reference/real_llama_cpp.py writes it)";
    fixture_ = nlohmann::json::parse(in);
    ASSERT_EQ(std::filesystem::file_size(kModel), fixture_.at("model_bytes").get<uint64_t>())
        << kModel << " is not the file the fixture was computed from ("
        << fixture_.at("model_sha256").get<std::string>() << ")";
  }

  void expect_agreement(const std::string& config) {
    const Agreement a = run_fixture(fixture_, config);
    std::printf(
        "%s: greedy ids %d/%d equal at margin > %.2f, %d/%d at any margin (largest margin where "
        "they differ %.3f); max |plinth - llama.cpp| over its top-5 logits %.3f\n",
        config.c_str(), a.agreeing, a.compared, kClearMargin, a.agreeing_anywhere, a.positions,
        a.max_disagreeing_margin, a.max_top5_diff);
    RecordProperty("max_top5_logit_diff", std::to_string(a.max_top5_diff));
    EXPECT_GE(a.compared * 3, a.positions * 2)
        << "fewer than 2/3 of the positions have a clear llama.cpp margin: the check is weak";
  }

  nlohmann::json fixture_;
};

TEST_F(Gemma3, Int8PathWithF16KvAgreesWithLlamaCppAtClearMargins) {
  expect_agreement(R"({"matmul": "int8", "kv_dtype": "f16", "threads": 2})");
}

TEST_F(Gemma3, FloatPathAgreesWithLlamaCppAtClearMargins) {
  expect_agreement(R"({"matmul": "float", "kv_dtype": "f32", "threads": 2})");
}

}  // namespace
