// backend_cpu on a tiny random LLaMA model: agreement with a naive float implementation, and
// invariance of the logits to chunking, batching and block placement
// (docs/architecture.md, 'Batch invariance').
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>

#include "backend_harness.hpp"
#include "tiny_llama.hpp"

namespace {

using harness::Backend;
using harness::BatchBuilder;
using harness::SeqStep;

constexpr uint32_t kBlockSize = 8;
constexpr uint32_t kNumBlocks = 32;

std::vector<int32_t> random_tokens(size_t n, uint32_t vocab, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int32_t> u(0, static_cast<int32_t>(vocab) - 1);
  std::vector<int32_t> t(n);
  for (auto& v : t) v = u(rng);
  return t;
}

float max_abs_diff(const std::vector<float>& a, const std::vector<float>& b) {
  EXPECT_EQ(a.size(), b.size());
  float m = 0.0f;
  for (size_t i = 0; i < a.size() && i < b.size(); ++i) m = std::max(m, std::fabs(a[i] - b[i]));
  return m;
}

std::vector<int32_t> blocks_for(size_t tokens, std::vector<int32_t> ids) {
  ids.resize((tokens + kBlockSize - 1) / kBlockSize);
  return ids;
}

// Runs `tokens` through a fresh backend in steps of `chunk` new tokens; returns the logits of
// every position.
std::vector<std::vector<float>> run_chunked(const harness::Library& lib, tiny::Model& m,
                                            const std::vector<int32_t>& tokens, size_t chunk,
                                            const std::vector<int32_t>& blocks,
                                            const std::string& config = "{}") {
  Backend be(lib, m.desc(), config);
  be.allocate(kNumBlocks, kBlockSize);
  std::vector<std::vector<float>> all;
  for (size_t at = 0; at < tokens.size(); at += chunk) {
    SeqStep s;
    s.blocks = blocks;
    s.cached = static_cast<int32_t>(at);
    s.tokens.assign(tokens.begin() + static_cast<long>(at),
                    tokens.begin() + static_cast<long>(std::min(tokens.size(), at + chunk)));
    s.all_logits = true;
    BatchBuilder bb({s}, kBlockSize);
    for (auto& row : be.forward(bb.batch)) all.push_back(std::move(row));
  }
  return all;
}

class BackendCpuForward : public ::testing::Test {
 protected:
  harness::Library lib;
};

TEST_F(BackendCpuForward, DescriptorNamesABackend) {
  EXPECT_STREQ(lib.descriptor().name, "backend_cpu");
  EXPECT_EQ(lib.descriptor().kind, PLINTH_KIND_BACKEND);
  EXPECT_EQ(lib.descriptor().abi_major, PLINTH_ABI_MAJOR);
  ASSERT_NE(lib.descriptor().config_schema, nullptr);
  EXPECT_NE(std::string(lib.descriptor().config_schema).find("max_batch_tokens"),
            std::string::npos);
}

TEST_F(BackendCpuForward, MatchesNaiveImplementation) {
  for (uint32_t neox : {0u, 1u}) {
    tiny::Dims d;
    d.rope_neox = neox;
    tiny::Model m(d, 7);
    const auto tokens = random_tokens(29, d.vocab, 1);
    const auto want = m.naive_logits(tokens);
    for (const char* config : {R"({"threads": 1})", R"({"threads": 2})"}) {
      const auto got =
          run_chunked(lib, m, tokens, tokens.size(), blocks_for(29, {0, 1, 2, 3}), config);
      ASSERT_EQ(got.size(), want.size());
      for (size_t p = 0; p < want.size(); ++p) {
        EXPECT_LE(max_abs_diff(got[p], want[p]), 1e-4f)
            << "position " << p << " rope_neox=" << neox << " config " << config;
      }
    }
  }
}

TEST_F(BackendCpuForward, PrefillChunksAndDecodeGiveTheSameLogits) {
  tiny::Model m;
  const auto tokens = random_tokens(37, m.dims().vocab, 2);
  const auto blocks = blocks_for(37, {4, 9, 1, 14, 6});
  const auto one = run_chunked(lib, m, tokens, tokens.size(), blocks);
  for (size_t chunk : {1u, 5u, 8u, 13u}) {
    const auto got = run_chunked(lib, m, tokens, chunk, blocks);
    ASSERT_EQ(got.size(), one.size());
    for (size_t p = 0; p < one.size(); ++p) {
      EXPECT_LE(max_abs_diff(got[p], one[p]), 1e-5f) << "chunk " << chunk << " position " << p;
    }
  }
}

// docs/architecture.md, 'Batch invariance': temperature-0 output must not depend on batching. With
// the default matmul path the logits are bit-identical however a long prompt (past the kernels'
// BLAS switch-over of 64 rows) is chunked.
TEST_F(BackendCpuForward, DefaultPathIsBitIdenticalAcrossChunkings) {
  tiny::Model m;
  const auto tokens = random_tokens(150, m.dims().vocab, 11);
  std::vector<int32_t> ids(19);
  for (size_t i = 0; i < ids.size(); ++i) ids[i] = static_cast<int32_t>((i * 7) % 32);
  const auto one = run_chunked(lib, m, tokens, tokens.size(), ids);
  for (size_t chunk : {1u, 7u, 100u}) {
    const auto got = run_chunked(lib, m, tokens, chunk, ids);
    ASSERT_EQ(got.size(), one.size());
    for (size_t p = 0; p < one.size(); ++p) {
      ASSERT_EQ(max_abs_diff(got[p], one[p]), 0.0f) << "chunk " << chunk << " position " << p;
    }
  }
}

TEST_F(BackendCpuForward, TwoSequencesBatchedEqualEachAlone) {
  tiny::Model m;
  const auto a = random_tokens(21, m.dims().vocab, 3);
  const auto b = random_tokens(30, m.dims().vocab, 4);
  const std::vector<int32_t> blocks_a = {17, 3, 25};     // 21 tokens: 3 blocks
  const std::vector<int32_t> blocks_b = {8, 30, 12, 0};  // 30 tokens: 4 blocks
  const auto alone_a = run_chunked(lib, m, a, a.size(), {0, 1, 2});
  const auto alone_b = run_chunked(lib, m, b, b.size(), {0, 1, 2, 3});

  // Batched: step 1 prefills a[0..15) and b[0..9); step 2 prefills a[15..20) and b[9..30);
  // step 3 decodes a[20] while b is done.
  Backend be(lib, m.desc());
  be.allocate(kNumBlocks, kBlockSize);
  std::vector<std::vector<float>> got_a, got_b;
  const auto step = [&](size_t a0, size_t a1, size_t b0, size_t b1) {
    std::vector<SeqStep> steps;
    if (a1 > a0) {
      steps.push_back({blocks_a, static_cast<int32_t>(a0),
                       std::vector<int32_t>(a.begin() + static_cast<long>(a0),
                                            a.begin() + static_cast<long>(a1)),
                       true});
    }
    if (b1 > b0) {
      steps.push_back({blocks_b, static_cast<int32_t>(b0),
                       std::vector<int32_t>(b.begin() + static_cast<long>(b0),
                                            b.begin() + static_cast<long>(b1)),
                       true});
    }
    BatchBuilder bb(steps, kBlockSize);
    auto rows = be.forward(bb.batch);
    size_t r = 0;
    for (size_t k = a0; k < a1; ++k) got_a.push_back(rows[r++]);
    for (size_t k = b0; k < b1; ++k) got_b.push_back(rows[r++]);
  };
  step(0, 15, 0, 9);
  step(15, 20, 9, 30);
  step(20, 21, 30, 30);
  ASSERT_EQ(got_a.size(), a.size());
  ASSERT_EQ(got_b.size(), b.size());
  for (size_t p = 0; p < a.size(); ++p)
    EXPECT_LE(max_abs_diff(got_a[p], alone_a[p]), 1e-5f) << "a " << p;
  for (size_t p = 0; p < b.size(); ++p)
    EXPECT_LE(max_abs_diff(got_b[p], alone_b[p]), 1e-5f) << "b " << p;
}

TEST_F(BackendCpuForward, OnlyRequestedLogitsAreReturned) {
  tiny::Model m;
  const auto tokens = random_tokens(12, m.dims().vocab, 5);
  const auto all = run_chunked(lib, m, tokens, tokens.size(), {5, 6});
  Backend be(lib, m.desc());
  be.allocate(kNumBlocks, kBlockSize);
  BatchBuilder bb({SeqStep{{5, 6}, 0, tokens, true}}, kBlockSize);
  bb.logits_indices = {0, 4, 11};
  bb.batch.num_logits = 3;
  bb.point();
  const auto got = be.forward(bb.batch);
  ASSERT_EQ(got.size(), 3u);
  EXPECT_LE(max_abs_diff(got[0], all[0]), 1e-5f);
  EXPECT_LE(max_abs_diff(got[1], all[4]), 1e-5f);
  EXPECT_LE(max_abs_diff(got[2], all[11]), 1e-5f);
}

TEST_F(BackendCpuForward, CopyBlocksCopiesEveryLayer) {
  tiny::Model m;
  const auto tokens = random_tokens(13, m.dims().vocab, 6);
  const auto want = m.naive_logits(tokens);
  Backend be(lib, m.desc());
  be.allocate(kNumBlocks, kBlockSize);
  // Prefill 12 tokens into blocks {3, 1}, copy them to {6, 5}, then decode token 12 on the copy.
  BatchBuilder pre(
      {SeqStep{{3, 1}, 0, std::vector<int32_t>(tokens.begin(), tokens.begin() + 12), false}},
      kBlockSize);
  be.forward(pre.batch);
  const plinth_block_copy copies[] = {{3, 6}, {1, 5}};
  plinth_error e = harness::make_error();
  ASSERT_EQ(be.vt().copy_blocks(be.inst(), copies, 2, &e), PLINTH_OK) << e.message;
  // Overwrite the originals' data with another prompt so a read of them would show.
  const auto other = random_tokens(12, m.dims().vocab, 99);
  BatchBuilder clobber({SeqStep{{3, 1}, 0, other, false}}, kBlockSize);
  be.forward(clobber.batch);
  BatchBuilder dec({SeqStep{{6, 5}, 12, {tokens[12]}, false}}, kBlockSize);
  const auto got = be.forward(dec.batch);
  ASSERT_EQ(got.size(), 1u);
  EXPECT_LE(max_abs_diff(got[0], want[12]), 1e-4f);

  const plinth_block_copy bad[] = {{0, static_cast<int32_t>(kNumBlocks)}};
  EXPECT_EQ(be.vt().copy_blocks(be.inst(), bad, 1, &e), PLINTH_ERR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(e.message).find("32"), std::string::npos) << e.message;
}

TEST_F(BackendCpuForward, F16KvCacheStaysClose) {
  tiny::Model m;
  const auto tokens = random_tokens(25, m.dims().vocab, 8);
  const auto want = m.naive_logits(tokens);
  const auto got =
      run_chunked(lib, m, tokens, 7, blocks_for(25, {2, 7, 11, 13}), R"({"kv_dtype": "f16"})");
  for (size_t p = 0; p < want.size(); ++p) EXPECT_LE(max_abs_diff(got[p], want[p]), 2e-2f) << p;
}

}  // namespace
