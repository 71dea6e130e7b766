// backend_cpu on SmolLM2-135M-Instruct requantized by llama.cpp's own llama-quantize (Q4_K_M,
// Q5_K_M, Q6_K, Q3_K_M, Q2_K, IQ4_XS: the K-quants, Q5_0 / Q5_1 / Q8_0 / IQ4_NL fallbacks and
// their mixes as people download them), teacher-forced against natively built llama.cpp 0.3.36 on
// the same files (tools/reference/kquant_llama_cpp.py, fixture kquant_llama_cpp.json): plinth's
// greedy id equals llama.cpp's at every position where llama.cpp's top-1/top-2 margin is clear,
// on the int8 path (cpu.json's) and the float path (cpu_float.json's). llama.cpp pairs K-quant
// weights with Q8_K activations (one scale per 256 values), plinth's int8 path with Q8 per 32 and
// its float path with f32 activations, so the logits differ by a few tenths and only clear
// margins are compared. Each file runs when it is present with the fixture's bytes (SHA-256);
// otherwise the test says how to make it. Measured (2026-12-05, 716 positions per file): equal at
// every position of margin > 1 (404-465 per file) on both paths; at margin > 0.25 at 593-630 of
// 603-632; at any margin 671-694 of 716.
#include <gtest/gtest.h>
#include <openssl/evp.h>

#include <algorithm>
#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "backend_harness.hpp"
#include "model/model_desc.hpp"

namespace {

namespace fs = std::filesystem;
using harness::BatchBuilder;
using harness::SeqStep;

const std::string kFixture =
    std::string(PLINTH_SOURCE_DIR) + "/tests/fixtures/golden/kquant_llama_cpp.json";
constexpr uint32_t kBlockSize = 16;
// A margin above this is "clear": plinth's and llama.cpp's logits on these files differ by up to
// a few tenths (activation quantization), measured below it.
constexpr double kClearMargin = 1.0;

std::string sha256_hex(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  EVP_MD_CTX* ctx = EVP_MD_CTX_new();
  EVP_DigestInit_ex(ctx, EVP_sha256(), nullptr);
  std::vector<char> buf(1 << 20);
  while (in.read(buf.data(), static_cast<std::streamsize>(buf.size())) || in.gcount() > 0) {
    EVP_DigestUpdate(ctx, buf.data(), static_cast<size_t>(in.gcount()));
  }
  std::array<unsigned char, 32> md{};
  unsigned int len = 0;
  EVP_DigestFinal_ex(ctx, md.data(), &len);
  EVP_MD_CTX_free(ctx);
  std::string hex;
  char two[3];
  for (unsigned int i = 0; i < len; ++i) {
    std::snprintf(two, sizeof two, "%02x", md[i]);
    hex += two;
  }
  return hex;
}

struct Agreement {
  int positions = 0;
  int compared = 0;  // margin > kClearMargin (asserted equal)
  int agree = 0;
  int agree_any = 0;  // equal at any margin (information)
  int quarter = 0;    // margin > 0.25 (information)
  int agree_quarter = 0;
};

// Every sequence of the fixture through `config` on `path`, teacher-forced (one prefill with the
// logits of every position), against the fixture entry's top-1 ids where its margin is clear.
Agreement agreement(const std::string& path, const nlohmann::json& entry,
                    const nlohmann::json& seqs, const std::string& config) {
  const plinth::LoadedModel model = plinth::load_model(path);
  harness::Library lib;
  harness::Backend be(lib, *model.desc->get(), config);
  be.allocate(64, kBlockSize);
  Agreement a;
  for (size_t i = 0; i < seqs.size(); ++i) {
    SeqStep s;
    s.tokens = seqs[i].get<std::vector<int32_t>>();
    for (int32_t b = 0; static_cast<size_t>(b) * kBlockSize < s.tokens.size(); ++b) {
      s.blocks.push_back(b);
    }
    s.all_logits = true;
    BatchBuilder bb({s}, kBlockSize);
    const auto rows = be.forward(bb.batch);
    const auto& top1 = entry.at("top1")[i];
    const auto& margin = entry.at("margin")[i];
    EXPECT_EQ(rows.size(), s.tokens.size());
    for (size_t t = 0; t < rows.size(); ++t, ++a.positions) {
      const auto best = std::max_element(rows[t].begin(), rows[t].end()) - rows[t].begin();
      const bool same = best == top1[t].get<int64_t>();
      a.agree_any += same ? 1 : 0;
      if (margin[t].get<double>() > 0.25) {
        ++a.quarter;
        a.agree_quarter += same ? 1 : 0;
      }
      if (margin[t].get<double>() <= kClearMargin) continue;
      ++a.compared;
      if (same) {
        ++a.agree;
      } else {
        ADD_FAILURE() << entry.at("recipe").get<std::string>() << ": sequence " << i
                      << ", position " << t << ": plinth " << best << ", llama.cpp "
                      << top1[t].get<int64_t>() << " (margin " << margin[t].get<double>() << ")";
      }
    }
  }
  return a;
}

void run_path(const char* path_name, const std::string& config) {
  std::ifstream in(kFixture);
  ASSERT_TRUE(in) << kFixture << " is missing (tools/reference/kquant_llama_cpp.py writes it)";
  const nlohmann::json fx = nlohmann::json::parse(in);
  int ran = 0;
  std::string skipped;
  for (const auto& entry : fx.at("files")) {
    const std::string file = entry.at("file").get<std::string>();
    const std::string path = std::string(PLINTH_SOURCE_DIR) + "/models/" + file;
    if (!fs::exists(path)) {
      skipped += "\n  " + file + ": absent; make it with " +
                 fx.at("make_files").get<std::string>() + " --types \"" +
                 entry.at("recipe").get<std::string>() + "\"";
      continue;
    }
    if (fs::file_size(path) != entry.at("bytes").get<uint64_t>() ||
        sha256_hex(path) != entry.at("sha256").get<std::string>()) {
      skipped += "\n  " + file + ": other bytes than the fixture's (another llama-quantize?); " +
                 "regenerate the fixture with " + fx.at("command").get<std::string>();
      continue;
    }
    const Agreement a = agreement(path, entry, fx.at("sequences"), config);
    std::printf(
        "%s %s: %d positions, %d with llama.cpp margin > %.2f, greedy equal at %d (margin > 0.25: "
        "%d of %d; any margin: %d of %d)\n",
        entry.at("recipe").get<std::string>().c_str(), path_name, a.positions, a.compared,
        kClearMargin, a.agree, a.agree_quarter, a.quarter, a.agree_any, a.positions);
    EXPECT_GE(a.compared * 2, a.positions) << file << ": too few positions with a clear margin";
    ++ran;
  }
  if (!skipped.empty()) std::printf("not run:%s\n", skipped.c_str());
  if (ran == 0) GTEST_SKIP() << "no file of the fixture is present:" << skipped;
}

TEST(KQuantLlamaCpp, Int8PathGreedyEqualsLlamaCppWhereItsMarginIsClear) {
  run_path("int8",
           R"({"matmul": "int8", "kv_dtype": "f16", "threads": 2, "max_batch_tokens": 256})");
}

TEST(KQuantLlamaCpp, FloatPathGreedyEqualsLlamaCppWhereItsMarginIsClear) {
  run_path("float",
           R"({"matmul": "float", "kv_dtype": "f32", "threads": 2, "max_batch_tokens": 256})");
}

}  // namespace
