// The device memory plan with SmolLM2-135M's numbers, computed by hand: 30 layers, hidden 576,
// 9 heads, 3 KV heads, head_dim 64, ffn 1536, vocab 49152, tied embeddings.
#include <gtest/gtest.h>

#include <cmath>
#include <stdexcept>
#include <string>

#include "memory_plan.hpp"

namespace plinth::cuda {
namespace {

plinth_model_config smollm2() {
  plinth_model_config c{};
  c.struct_size = sizeof c;
  c.architecture = "llama";
  c.n_layers = 30;
  c.hidden_size = 576;
  c.n_heads = 9;
  c.n_kv_heads = 3;
  c.head_dim = 64;
  c.ffn_size = 1536;
  c.vocab_size = 49152;
  c.context_length = 8192;
  c.rope_theta = 100000.0f;
  c.rms_norm_eps = 1e-5f;
  c.tied_embeddings = 1;
  return c;
}

TEST(MemoryPlan, KvBytesPerToken) {
  // 2 (K, V) * 30 layers * 3 KV heads * 64 * 2 bytes
  EXPECT_EQ(kv_bytes_per_token_bf16(smollm2()), 23040u);
}

TEST(MemoryPlan, WeightBytes) {
  // token_embd 49152*576 = 28,311,552; per layer: q and o 2*576*576 = 663,552, k and v
  // 2*192*576 = 221,184, gate/up/down 3*1536*576 = 2,654,208, two norms 1,152 -> 3,540,096;
  // * 30 = 106,202,880; + output_norm 576: 134,515,008 elements (SmolLM2's 135M), 2 bytes each.
  EXPECT_EQ(weight_bytes_bf16(smollm2()), 269030016u);
  plinth_model_config untied = smollm2();
  untied.tied_embeddings = 0;  // + output.weight [49152, 576]
  EXPECT_EQ(weight_bytes_bf16(untied), 269030016u + 2u * 28311552u);
}

TEST(MemoryPlan, ActivationsAtDefaults) {
  const ActivationPlan p = plan_activations(smollm2(), 8192, 256);
  EXPECT_EQ(p.residual, 8192u * 576 * 4);  // 18,874,368
  EXPECT_EQ(p.hidden, 18874368u);
  EXPECT_EQ(p.gemm_input, 8192u * 1536 * 2);  // widest A operand: ffn_down's [T, 1536] bf16
  EXPECT_EQ(p.q, 18874368u);
  EXPECT_EQ(p.k, 8192u * 192 * 4);  // 6,291,456
  EXPECT_EQ(p.v, 6291456u);
  EXPECT_EQ(p.attn_out, 18874368u);
  EXPECT_EQ(p.ffn_gate, 8192u * 1536 * 4);  // 50,331,648
  EXPECT_EQ(p.ffn_up, 50331648u);
  EXPECT_EQ(p.logits_rows, 256u);
  EXPECT_EQ(p.logits, 256u * 49152 * 4);  // 50,331,648
  EXPECT_EQ(p.argmax_ids, 1024u);
  EXPECT_EQ(p.batch_meta, (3u * 8192 + 257 + 256 + 256) * 4);  // 101,380
  // 2*18874368 + 25165824 + 18874368 + 2*6291456 + 18874368 + 2*50331648 + 50331648 + 1024
  // + 101380
  EXPECT_EQ(p.total, 264343556u);
}

TEST(MemoryPlan, LogitsRowsNeverExceedTokens) {
  const ActivationPlan p = plan_activations(smollm2(), 16, 256);
  EXPECT_EQ(p.logits_rows, 16u);
  EXPECT_EQ(p.logits, 16u * 49152 * 4);
  EXPECT_EQ(p.residual, 16u * 576 * 4);
}

TEST(MemoryPlan, ZeroFieldsAreErrors) {
  plinth_model_config c = smollm2();
  c.ffn_size = 0;
  try {
    (void)plan_activations(c, 8192, 256);
    ADD_FAILURE() << "no error";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("config.ffn_size is 0"), std::string::npos) << e.what();
  }
  EXPECT_THROW((void)plan_activations(smollm2(), 0, 256), std::invalid_argument);
  EXPECT_THROW((void)plan_activations(smollm2(), 8192, 0), std::invalid_argument);
}

TEST(MemoryPlan, BlockTables) {
  EXPECT_EQ(block_table_bytes(256, 8192, 16), 256u * 512 * 4);
  EXPECT_EQ(block_table_bytes(256, 8193, 16), 256u * 513 * 4);  // a partial last block
  EXPECT_THROW((void)block_table_bytes(256, 8192, 0), std::invalid_argument);
}

TEST(KvPool, WholeBlocksOfTheFraction) {
  const uint64_t per_block = 23040u * 16;  // 368,640 bytes
  // 1 GiB * 0.9 = 966,367,641.6 -> 966,367,641 bytes -> 2621 blocks (2621.44)
  KvPoolPlan p = plan_kv_pool(1073741824u, 0.9, per_block);
  EXPECT_EQ(p.num_blocks, 2621u);
  EXPECT_EQ(p.bytes, 966205440u);
  // 140 GiB free (an H200) at 0.9: 150,323,855,360 * 0.9 = 135,291,469,824 bytes; / 368,640
  // = 367,001.6 -> 367,001 blocks
  p = plan_kv_pool(140ull << 30, 0.9, per_block);
  EXPECT_EQ(p.num_blocks, 367001u);
  EXPECT_EQ(p.bytes, p.num_blocks * per_block);
  // Exactly one block fits.
  p = plan_kv_pool(2 * per_block, 0.5, per_block);
  EXPECT_EQ(p.num_blocks, 1u);
  EXPECT_EQ(plan_kv_pool(per_block, 1.0, per_block).num_blocks, 1u);
}

TEST(KvPool, TooLittleMemory) {
  try {
    (void)plan_kv_pool(300000, 1.0, 368640);
    ADD_FAILURE() << "no error";
  } catch (const std::runtime_error& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("too little device memory"), std::string::npos) << m;
    EXPECT_NE(m.find("0.3 MiB free"), std::string::npos) << m;   // 300000 / 2^20 = 0.286
    EXPECT_NE(m.find("needs 0.4 MiB"), std::string::npos) << m;  // 368640 / 2^20 = 0.352
    EXPECT_NE(m.find("lower max_num_tokens"), std::string::npos) << m;
    EXPECT_NE(m.find("memory_fraction"), std::string::npos) << m;
    EXPECT_NE(m.find("smaller model"), std::string::npos) << m;
  }
  EXPECT_THROW((void)plan_kv_pool(0, 0.9, 368640), std::runtime_error);
}

TEST(KvPool, BadArguments) {
  EXPECT_THROW((void)plan_kv_pool(1u << 30, 0.0, 1024), std::invalid_argument);
  EXPECT_THROW((void)plan_kv_pool(1u << 30, 1.5, 1024), std::invalid_argument);
  EXPECT_THROW((void)plan_kv_pool(1u << 30, std::nan(""), 1024), std::invalid_argument);
  EXPECT_THROW((void)plan_kv_pool(1u << 30, 0.9, 0), std::invalid_argument);
}

}  // namespace
}  // namespace plinth::cuda
