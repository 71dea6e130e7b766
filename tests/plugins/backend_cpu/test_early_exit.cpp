// backend_cpu's extension plinth.early_exit/1 on a tiny random 4-layer LLaMA model: the model cut
// after its first exit_layer layers against the naive float implementation cut the same way, the
// K/V it writes (layers < exit_layer only, bit-identical to a full forward's), the full forward
// that follows it (self-speculative drafting then verification), and what it refuses.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>

#include "backend_harness.hpp"
#include "llama_forward.hpp"
#include "tiny_llama.hpp"

namespace {

using harness::Backend;
using harness::BatchBuilder;
using harness::SeqStep;

constexpr uint32_t kBlockSize = 8;
constexpr uint32_t kNumBlocks = 16;
constexpr uint32_t kLayers = 4;

tiny::Dims four_layers(uint32_t rope_neox = 0) {
  tiny::Dims d;
  d.n_layers = kLayers;
  d.rope_neox = rope_neox;
  return d;
}

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

std::vector<int32_t> slice(const std::vector<int32_t>& v, size_t from, size_t to) {
  return std::vector<int32_t>(v.begin() + static_cast<long>(from),
                              v.begin() + static_cast<long>(to));
}

class BackendCpuEarlyExit : public ::testing::Test {
 protected:
  harness::Library lib;
};

// Two sequences batched: a prefill of A (every position's logits) beside a prefill of B (the
// last position's only, so the exit layer compacts non-trivial rows), then three decode steps of
// both; every row within the forward tests' 1e-4 of the naive model cut after exit_layer layers.
TEST_F(BackendCpuEarlyExit, MatchesTheNaiveModelCutAfterExitLayer) {
  for (uint32_t neox : {0u, 1u}) {
    tiny::Model m(four_layers(neox), 17);
    const auto a = random_tokens(23, m.dims().vocab, 31);  // 20 prefill + 3 decodes
    const auto b = random_tokens(16, m.dims().vocab, 32);  // 13 prefill + 3 decodes
    const std::vector<int32_t> blocks_a = {6, 1, 12};
    const std::vector<int32_t> blocks_b = {9, 3};
    const auto full_a = m.naive_logits(a);
    for (uint32_t exit_layer = 1; exit_layer < kLayers; ++exit_layer) {
      const auto want_a = m.naive_logits(a, exit_layer);
      const auto want_b = m.naive_logits(b, exit_layer);
      // The reference really is cut: its logits are far from the whole model's.
      EXPECT_GT(max_abs_diff(want_a.back(), full_a.back()), 1e-2f) << "exit " << exit_layer;
      for (const char* config : {R"({"threads": 1})", R"({"threads": 2})"}) {
        SCOPED_TRACE(std::string(config) + " exit_layer " + std::to_string(exit_layer) +
                     " rope_neox " + std::to_string(neox));
        Backend be(lib, m.desc(), config);
        be.allocate(kNumBlocks, kBlockSize);
        BatchBuilder pre(
            {{blocks_a, 0, slice(a, 0, 20), true}, {blocks_b, 0, slice(b, 0, 13), false}},
            kBlockSize);
        const auto rows = be.forward_early_exit(pre.batch, exit_layer);
        ASSERT_EQ(rows.size(), 21u);
        for (size_t p = 0; p < 20; ++p) {
          EXPECT_LE(max_abs_diff(rows[p], want_a[p]), 1e-4f) << "a position " << p;
        }
        EXPECT_LE(max_abs_diff(rows[20], want_b[12]), 1e-4f) << "b position 12";
        for (int32_t k = 0; k < 3; ++k) {
          BatchBuilder dec({{blocks_a, 20 + k, {a[static_cast<size_t>(20 + k)]}, false},
                            {blocks_b, 13 + k, {b[static_cast<size_t>(13 + k)]}, false}},
                           kBlockSize);
          const auto d = be.forward_early_exit(dec.batch, exit_layer);
          ASSERT_EQ(d.size(), 2u);
          EXPECT_LE(max_abs_diff(d[0], want_a[static_cast<size_t>(20 + k)]), 1e-4f)
              << "a decode position " << 20 + k;
          EXPECT_LE(max_abs_diff(d[1], want_b[static_cast<size_t>(13 + k)]), 1e-4f)
              << "b decode position " << 13 + k;
        }
      }
    }
  }
}

// A full forward rewrites every layer of its slots: an early exit over other tokens at the same
// slots (a rejected draft) leaves no trace in the full forward that follows.
TEST_F(BackendCpuEarlyExit, FullForwardAfterEarlyExitAtTheSameSlotsEqualsItAlone) {
  tiny::Model m(four_layers(), 5);
  const auto p = random_tokens(19, m.dims().vocab, 40);
  const auto q = random_tokens(19, m.dims().vocab, 41);
  const std::vector<int32_t> blocks = {7, 2, 11};
  const auto alone = [&] {
    Backend be(lib, m.desc());
    be.allocate(kNumBlocks, kBlockSize);
    BatchBuilder bb({{blocks, 0, p, true}}, kBlockSize);
    return be.forward(bb.batch);
  }();
  for (uint32_t exit_layer = 1; exit_layer < kLayers; ++exit_layer) {
    for (const auto* first : {&p, &q}) {
      Backend be(lib, m.desc());
      be.allocate(kNumBlocks, kBlockSize);
      BatchBuilder draft({{blocks, 0, *first, true}}, kBlockSize);
      be.forward_early_exit(draft.batch, exit_layer);
      BatchBuilder bb({{blocks, 0, p, true}}, kBlockSize);
      EXPECT_EQ(be.forward(bb.batch), alone)
          << "exit_layer " << exit_layer << (first == &p ? ", same tokens" : ", other tokens");
    }
  }
}

// Self-speculative decoding: after a full prefill, draft three tokens one at a time with the early
// exit, verify them in one full forward (all four logits), then decode the next token in full:
// every logit bit-identical to the same steps without the drafts, whether the drafts were the
// verified tokens or not.
TEST_F(BackendCpuEarlyExit, DraftThenVerifyEqualsPlainDecoding) {
  tiny::Model m(four_layers(), 9);
  const auto t = random_tokens(17, m.dims().vocab, 50);
  const auto wrong = random_tokens(17, m.dims().vocab, 51);
  const std::vector<int32_t> blocks = {4, 13, 0};
  const auto run = [&](uint32_t exit_layer, const std::vector<int32_t>* drafts) {
    Backend be(lib, m.desc(), R"({"threads": 2})");
    be.allocate(kNumBlocks, kBlockSize);
    BatchBuilder pre({{blocks, 0, slice(t, 0, 12), false}}, kBlockSize);
    std::vector<std::vector<float>> got = be.forward(pre.batch);
    if (drafts != nullptr) {
      for (int32_t k = 12; k < 15; ++k) {
        BatchBuilder d({{blocks, k, {(*drafts)[static_cast<size_t>(k)]}, false}}, kBlockSize);
        EXPECT_EQ(be.forward_early_exit(d.batch, exit_layer).size(), 1u);
      }
    }
    BatchBuilder verify({{blocks, 12, slice(t, 12, 16), true}}, kBlockSize);
    for (auto& r : be.forward(verify.batch)) got.push_back(std::move(r));
    BatchBuilder next({{blocks, 16, {t[16]}, false}}, kBlockSize);
    for (auto& r : be.forward(next.batch)) got.push_back(std::move(r));
    return got;
  };
  const auto plain = run(1, nullptr);
  ASSERT_EQ(plain.size(), 6u);
  // And plain decoding is the model: the last row within 1e-4 of the naive logits.
  EXPECT_LE(max_abs_diff(plain.back(), m.naive_logits(t).back()), 1e-4f);
  for (uint32_t exit_layer = 1; exit_layer < kLayers; ++exit_layer) {
    EXPECT_EQ(run(exit_layer, &t), plain) << "accepted drafts, exit_layer " << exit_layer;
    EXPECT_EQ(run(exit_layer, &wrong), plain) << "rejected drafts, exit_layer " << exit_layer;
  }
}

// Every K and V element of every slot of every layer, as float.
std::vector<std::vector<float>> kv_contents(const plinth::cpu::LlamaForward& f) {
  const plinth::cpu::PagedKvStorage& kv = f.kv();
  const plinth::cpu::LlamaShape& s = f.shape();
  std::vector<std::vector<float>> layers(static_cast<size_t>(s.n_layers));
  for (int64_t l = 0; l < s.n_layers; ++l) {
    for (int kind = 0; kind < 2; ++kind) {
      for (int64_t slot = 0; slot < kv.num_slots(); ++slot) {
        for (int64_t h = 0; h < s.n_kv_heads; ++h) {
          const auto* row = static_cast<const float*>(kv.head_row(l, kind, slot, h));
          layers[static_cast<size_t>(l)].insert(layers[static_cast<size_t>(l)].end(), row,
                                                row + s.head_dim);
        }
      }
    }
  }
  return layers;
}

// The cache itself (the core class, linked directly): after a full prefill of P, an early exit
// over other tokens Q at the same slots changes layers [0, exit_layer) to exactly what a full
// forward of Q writes there, and leaves every deeper layer as it was.
TEST(BackendCpuEarlyExitKv, WritesOnlyTheLayersBelowTheExit) {
  tiny::Model m(four_layers(), 3);
  const auto p = random_tokens(13, m.dims().vocab, 60);
  const auto q = random_tokens(13, m.dims().vocab, 61);
  const std::vector<int32_t> blocks = {5, 2};
  plinth::cpu::ForwardOptions opt;
  opt.threads = 2;
  opt.max_batch_tokens = 64;
  BatchBuilder bp({{blocks, 0, p, false}}, kBlockSize);
  BatchBuilder bq({{blocks, 0, q, false}}, kBlockSize);

  plinth::cpu::LlamaForward full_q(m.desc(), opt);
  full_q.kv().allocate(kNumBlocks, kBlockSize);
  full_q.forward(bq.batch);
  const auto want_q = kv_contents(full_q);

  for (int64_t exit_layer = 1; exit_layer < kLayers; ++exit_layer) {
    plinth::cpu::LlamaForward f(m.desc(), opt);
    f.kv().allocate(kNumBlocks, kBlockSize);
    f.forward(bp.batch);
    const auto before = kv_contents(f);
    f.forward_early_exit(bq.batch, exit_layer);
    const auto after = kv_contents(f);
    for (int64_t l = 0; l < kLayers; ++l) {
      const auto i = static_cast<size_t>(l);
      if (l < exit_layer) {
        EXPECT_NE(after[i], before[i]) << "layer " << l << " exit_layer " << exit_layer;
        EXPECT_EQ(after[i], want_q[i]) << "layer " << l << " exit_layer " << exit_layer;
      } else {
        EXPECT_EQ(after[i], before[i]) << "layer " << l << " exit_layer " << exit_layer;
      }
    }
  }
}

TEST_F(BackendCpuEarlyExit, ExtensionIsOfferedUnderItsNameOnly) {
  tiny::Model m(four_layers());
  Backend be(lib, m.desc());
  ASSERT_NE(be.vt().lifecycle.get_extension, nullptr);
  const auto get = [&](const char* name) {
    return be.vt().lifecycle.get_extension(be.inst(), name);
  };
  EXPECT_EQ(get("plinth.early_exit/2"), nullptr);
  EXPECT_EQ(get("plinth.cuda_stream/1"), nullptr);
  EXPECT_EQ(get("plinth.unknown/1"), nullptr);
  EXPECT_EQ(get(""), nullptr);
  EXPECT_EQ(get(nullptr), nullptr);
  const plinth_early_exit_ext& ext = be.early_exit();
  EXPECT_EQ(ext.struct_size, sizeof(plinth_early_exit_ext));
  EXPECT_EQ(ext.num_layers(be.inst()), kLayers);

  tiny::Model two;  // the default tiny model: 2 layers
  Backend be2(lib, two.desc());
  EXPECT_EQ(be2.early_exit().num_layers(be2.inst()), 2u);
}

TEST_F(BackendCpuEarlyExit, RefusesAnExitLayerOutsideOneToNumLayers) {
  tiny::Model m(four_layers());
  Backend be(lib, m.desc());
  be.allocate(kNumBlocks, kBlockSize);
  const auto t = random_tokens(5, m.dims().vocab, 70);
  BatchBuilder bb({{{0}, 0, t, false}}, kBlockSize);
  for (uint32_t bad : {0u, kLayers, kLayers + 1, 0xffffffffu}) {
    const auto [st, msg] = be.early_exit_status(bb.batch, bad);
    EXPECT_EQ(st, PLINTH_ERR_INVALID_ARGUMENT) << "exit_layer " << bad;
    EXPECT_NE(msg.find("exit_layer = " + std::to_string(bad)), std::string::npos) << msg;
    EXPECT_NE(msg.find("[1, 4)"), std::string::npos) << msg;
  }
  // The bounds are accepted.
  EXPECT_EQ(be.early_exit_status(bb.batch, 1).first, PLINTH_OK);
  EXPECT_EQ(be.early_exit_status(bb.batch, kLayers - 1).first, PLINTH_OK);
}

TEST_F(BackendCpuEarlyExit, RefusesWhatForwardRefuses) {
  tiny::Model m(four_layers());
  Backend be(lib, m.desc());
  const auto t = random_tokens(5, m.dims().vocab, 71);
  BatchBuilder bb({{{0}, 0, t, false}}, kBlockSize);
  auto [st, msg] = be.early_exit_status(bb.batch, 2);
  EXPECT_EQ(st, PLINTH_ERR_INVALID_ARGUMENT);
  EXPECT_NE(msg.find("allocate_kv"), std::string::npos) << msg;

  be.allocate(kNumBlocks, kBlockSize);
  bb.token_ids[3] = static_cast<int32_t>(m.dims().vocab);
  std::tie(st, msg) = be.early_exit_status(bb.batch, 2);
  EXPECT_EQ(st, PLINTH_ERR_INVALID_ARGUMENT);
  EXPECT_NE(msg.find("token_ids[3]"), std::string::npos) << msg;

  plinth_error e = harness::make_error();
  plinth_forward_output out{};
  EXPECT_EQ(be.early_exit().forward_early_exit(be.inst(), nullptr, 2, &out, &e),
            PLINTH_ERR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(e.message).find("NULL"), std::string::npos) << e.message;
}

}  // namespace
