// Every architecture on backend_cpu's float path against the independent NumPy float64 reference
// (tools/reference/arch_reference.py; fixture tests/fixtures/golden/arch_reference.json, written
// by tools/reference/arch_golden.py): the synthetic model of `plinth synth-model --arch A` (the
// same bytes the fixture was computed from: FNV-1a 64 checked), logits at every position of three
// prompts, (1) prefilled together in one batch and (2) decoded token by token on small shuffled
// blocks (so RoPE, the KV cache, paged attention and the sliding window run at every position);
// and (3) greedy ids against natively built llama.cpp on the same files where its margin is clear.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <numeric>
#include <random>
#include <string>
#include <vector>

#include "backend_harness.hpp"
#include "model/model_desc.hpp"
#include "model/synthetic_arch.hpp"

namespace {

namespace fs = std::filesystem;
using harness::BatchBuilder;
using harness::SeqStep;

const std::string kGolden =
    std::string(PLINTH_SOURCE_DIR) + "/tests/fixtures/golden/arch_reference.json";
constexpr uint32_t kBlockSize = 4;
// Float path (f32 activations and KV) vs float64: measured max |diff| is ~1e-5 of logits of
// magnitude ~1..10; the bound leaves room for other CPUs' kernels (FMA order) only.
constexpr double kTol = 2e-4;
const char* const kConfig =
    R"({"matmul": "float", "kv_dtype": "f32", "threads": 2, "max_batch_tokens": 64})";

uint64_t fnv1a64(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  uint64_t h = 0xcbf29ce484222325ull;
  char c = 0;
  while (in.get(c)) {
    h ^= static_cast<uint8_t>(c);
    h *= 0x100000001b3ull;
  }
  return h;
}

std::vector<float> decode_b64_f32(const std::string& s) {
  static const std::string kAlphabet =
      "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::vector<uint8_t> bytes;
  uint32_t acc = 0;
  int bits = 0;
  for (const char c : s) {
    if (c == '=') break;
    acc = (acc << 6) | static_cast<uint32_t>(kAlphabet.find(c));
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      bytes.push_back(static_cast<uint8_t>((acc >> bits) & 0xFF));
    }
  }
  std::vector<float> out(bytes.size() / 4);
  std::memcpy(out.data(), bytes.data(), out.size() * 4);
  return out;
}

struct Prompt {
  std::vector<int32_t> ids;
  std::vector<float> logits;  // [ids.size(), vocab]
};

class ArchReference : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    std::ifstream in(kGolden);
    ASSERT_TRUE(in) << kGolden << " is missing (tools/reference/arch_golden.py writes it)";
    const nlohmann::json golden = nlohmann::json::parse(in);
    const nlohmann::json* entry = nullptr;
    for (const auto& m : golden.at("models")) {
      if (m.at("arch") == GetParam()) entry = &m;
    }
    ASSERT_NE(entry, nullptr) << "no fixture entry for " << GetParam();
    vocab_ = entry->at("vocab").get<int64_t>();
    for (const auto& p : entry->at("prompts")) {
      Prompt pr;
      pr.ids = p.at("ids").get<std::vector<int32_t>>();
      pr.logits = decode_b64_f32(p.at("logits_f32_b64").get<std::string>());
      ASSERT_EQ(pr.logits.size(), pr.ids.size() * static_cast<size_t>(vocab_));
      prompts_.push_back(std::move(pr));
    }
    path_ = (fs::temp_directory_path() /
             ("plinth_arch_ref_" + GetParam() + "_" + std::to_string(::getpid()) + ".gguf"))
                .string();
    plinth::ArchModelOptions o;
    o.arch = GetParam();
    o.seed = golden.at("seed").get<uint64_t>();
    plinth::make_arch_model(o).write_file(path_);
    char hex[17];
    std::snprintf(hex, sizeof(hex), "%016llx", static_cast<unsigned long long>(fnv1a64(path_)));
    ASSERT_EQ(std::string(hex), entry->at("fnv1a64").get<std::string>())
        << "the synthetic " << GetParam()
        << " model differs from the one the fixture was computed from; regenerate it with "
        << golden.at("command").get<std::string>();
  }
  void TearDown() override {
    if (!path_.empty()) fs::remove(path_);
  }

  // max |plinth - reference| over row `r` of prompt `p`.
  double row_diff(const std::vector<float>& got, const Prompt& p, size_t r) const {
    double worst = 0.0;
    for (int64_t v = 0; v < vocab_; ++v) {
      const double want = p.logits[r * static_cast<size_t>(vocab_) + static_cast<size_t>(v)];
      worst = std::max(worst, std::fabs(static_cast<double>(got[static_cast<size_t>(v)]) - want));
    }
    return worst;
  }

  int64_t vocab_ = 0;
  std::vector<Prompt> prompts_;
  std::string path_;
};

TEST_P(ArchReference, PrefillAtEveryPositionMatchesFloat64) {
  const plinth::LoadedModel model = plinth::load_model(path_);
  harness::Library lib;
  harness::Backend be(lib, *model.desc->get(), kConfig);
  be.allocate(64, kBlockSize);
  std::vector<SeqStep> steps;
  int32_t next = 0;
  for (const Prompt& p : prompts_) {
    SeqStep s;
    for (size_t b = 0; b * kBlockSize < p.ids.size(); ++b) s.blocks.push_back(next++);
    s.tokens = p.ids;
    s.all_logits = true;
    steps.push_back(s);
  }
  BatchBuilder bb(steps, kBlockSize);
  const auto rows = be.forward(bb.batch);
  size_t r = 0;
  double worst = 0.0;
  for (const Prompt& p : prompts_) {
    for (size_t t = 0; t < p.ids.size(); ++t, ++r) worst = std::max(worst, row_diff(rows[r], p, t));
  }
  EXPECT_LE(worst, kTol) << GetParam() << ": max |logit - float64 reference| over every position";
  RecordProperty("max_abs_diff", std::to_string(worst));
}

TEST_P(ArchReference, DecodeTokenByTokenOnShuffledBlocksMatchesFloat64) {
  const plinth::LoadedModel model = plinth::load_model(path_);
  harness::Library lib;
  harness::Backend be(lib, *model.desc->get(), kConfig);
  std::vector<int32_t> ids(64);
  std::iota(ids.begin(), ids.end(), 0);
  std::shuffle(ids.begin(), ids.end(), std::mt19937(99));
  be.allocate(64, kBlockSize);
  std::vector<std::vector<int32_t>> blocks(prompts_.size());
  size_t next = 0;
  for (size_t i = 0; i < prompts_.size(); ++i) {
    for (size_t b = 0; b * kBlockSize < prompts_[i].ids.size(); ++b)
      blocks[i].push_back(ids[next++]);
  }
  double worst = 0.0;
  size_t longest = 0;
  for (const Prompt& p : prompts_) longest = std::max(longest, p.ids.size());
  for (size_t t = 0; t < longest; ++t) {  // one token of every unfinished prompt per step
    std::vector<SeqStep> steps;
    std::vector<size_t> who;
    for (size_t i = 0; i < prompts_.size(); ++i) {
      if (t >= prompts_[i].ids.size()) continue;
      SeqStep s;
      s.blocks = blocks[i];
      s.cached = static_cast<int32_t>(t);
      s.tokens = {prompts_[i].ids[t]};
      steps.push_back(s);
      who.push_back(i);
    }
    BatchBuilder bb(steps, kBlockSize);
    const auto rows = be.forward(bb.batch);
    for (size_t k = 0; k < who.size(); ++k) {
      worst = std::max(worst, row_diff(rows[k], prompts_[who[k]], t));
    }
  }
  EXPECT_LE(worst, kTol) << GetParam() << ": decode, max |logit - float64 reference|";
}

// Natively built llama.cpp on the same files, teacher-forced (tools/reference/arch_llama_cpp.py,
// fixture arch_llama_cpp.json): plinth's greedy id equals llama.cpp's at every position where
// llama.cpp's top-1/top-2 margin is clear. llama.cpp's numerics are no tight oracle (its CPU GELU
// reads an f16 table, its RoPE angles are float powers), hence the margin.
TEST_P(ArchReference, GreedyIdsEqualLlamaCppWhereItsMarginIsClear) {
  const std::string file =
      std::string(PLINTH_SOURCE_DIR) + "/tests/fixtures/golden/arch_llama_cpp.json";
  std::ifstream in(file);
  if (!in) GTEST_SKIP() << file << " is absent (tools/reference/arch_llama_cpp.py writes it)";
  const nlohmann::json lc = nlohmann::json::parse(in);
  const nlohmann::json* entry = nullptr;
  for (const auto& m : lc.at("models")) {
    if (m.at("arch") == GetParam()) entry = &m;
  }
  ASSERT_NE(entry, nullptr) << "no llama.cpp entry for " << GetParam();
  ASSERT_EQ(entry->at("prompts").size(), prompts_.size());
  constexpr double kClearMargin = 0.05;
  const plinth::LoadedModel model = plinth::load_model(path_);
  harness::Library lib;
  harness::Backend be(lib, *model.desc->get(), kConfig);
  be.allocate(64, kBlockSize);
  int compared = 0, positions = 0;
  int32_t next = 0;
  for (size_t i = 0; i < prompts_.size(); ++i) {
    const auto& want = entry->at("prompts")[i];
    ASSERT_EQ(want.at("ids").get<std::vector<int32_t>>(), prompts_[i].ids);
    SeqStep s;
    for (size_t b = 0; b * kBlockSize < prompts_[i].ids.size(); ++b) s.blocks.push_back(next++);
    s.tokens = prompts_[i].ids;
    s.all_logits = true;
    BatchBuilder bb({s}, kBlockSize);
    const auto rows = be.forward(bb.batch);
    for (size_t t = 0; t < rows.size(); ++t, ++positions) {
      if (want.at("margin")[t].get<double>() <= kClearMargin) continue;
      ++compared;
      const auto best = std::max_element(rows[t].begin(), rows[t].end()) - rows[t].begin();
      EXPECT_EQ(best, want.at("top1")[t].get<int64_t>())
          << GetParam() << ", prompt " << i << ", position " << t;
    }
  }
  EXPECT_GE(compared * 2, positions) << "too few positions with a clear llama.cpp margin";
}

INSTANTIATE_TEST_SUITE_P(Archs, ArchReference,
                         ::testing::Values("llama", "llama3", "qwen2", "qwen3", "gemma3", "phi3",
                                           "granite", "olmo2", "smollm3"),
                         [](const ::testing::TestParamInfo<std::string>& i) { return i.param; });

}  // namespace
