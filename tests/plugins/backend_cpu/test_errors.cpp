// backend_cpu refuses what it cannot run or what breaks backend.h's contract, naming the field.
#include <gtest/gtest.h>

#include <vector>

#include <fstream>
#include <functional>

#include "backend_harness.hpp"
#include "common/host_config.hpp"
#include "cpu_backend.hpp"
#include "tiny_llama.hpp"

namespace {

using harness::Backend;
using harness::BatchBuilder;
using harness::SeqStep;

std::pair<int32_t, std::string> try_create(const harness::Library& lib, const plinth_model_desc* m,
                                           const char* config) {
  plinth_create_args a{};
  a.struct_size = sizeof(a);
  a.config_json = config;
  a.model = m;
  plinth_instance* inst = nullptr;
  plinth_error e = harness::make_error();
  const int32_t st = lib.vt().lifecycle.create(&a, &inst, &e);
  if (st == PLINTH_OK) lib.vt().lifecycle.destroy(inst);
  return {st, st == PLINTH_OK ? "" : e.message};
}

void expect_error(const std::pair<int32_t, std::string>& r, int32_t status,
                  const std::string& needle) {
  EXPECT_EQ(r.first, status) << r.second;
  EXPECT_NE(r.second.find(needle), std::string::npos) << "message: " << r.second;
}

TEST(BackendCpuCreate, RefusesWhatItCannotRun) {
  harness::Library lib;
  tiny::Model m;
  expect_error(try_create(lib, nullptr, "{}"), PLINTH_ERR_INVALID_ARGUMENT, "model");

  // The architecture name is informational: backends implement features, never names.
  m.desc().config.architecture = "any-name";
  EXPECT_EQ(try_create(lib, &m.desc(), "{}").first, PLINTH_OK);
  m.desc().config.architecture = "llama";

  // ABI 1.4's description: a feature bit this build does not know is named, never ignored; a
  // layer stride below 1.4's item is refused.
  std::vector<plinth_arch_layer> layers(m.desc().config.n_layers,
                                        plinth_arch_layer{m.desc().config.rope_theta, 1.0f, 1, 0});
  plinth_arch_desc arch{};
  arch.struct_size = sizeof(arch);
  arch.layer_stride = sizeof(plinth_arch_layer);
  arch.rope_dims = m.desc().config.head_dim;
  arch.embed_scale = arch.logit_scale = 1.0f;
  arch.n_layers = m.desc().config.n_layers;
  arch.layers = layers.data();
  arch.required_features = 1ull << 40;
  m.desc().arch = &arch;
  expect_error(try_create(lib, &m.desc(), "{}"), PLINTH_ERR_UNSUPPORTED, "bit 40");
  arch.required_features = 0;
  EXPECT_EQ(try_create(lib, &m.desc(), "{}").first, PLINTH_OK);
  arch.layer_stride = 8;
  expect_error(try_create(lib, &m.desc(), "{}"), PLINTH_ERR_INVALID_ARGUMENT, "layer_stride");
  arch.layer_stride = sizeof(plinth_arch_layer);
  layers[1].sliding_window = 4;  // without the sliding_window bit
  expect_error(try_create(lib, &m.desc(), "{}"), PLINTH_ERR_INVALID_ARGUMENT, "sliding_window");
  layers[1].sliding_window = 0;
  // Per-head and whole-vector q/k norms exclude each other; a scale bit needs its value.
  arch.required_features = PLINTH_ARCH_QK_NORM | PLINTH_ARCH_QK_NORM_FULL;
  expect_error(try_create(lib, &m.desc(), "{}"), PLINTH_ERR_INVALID_ARGUMENT, "qk_norm_full");
  arch.required_features = PLINTH_ARCH_RESIDUAL_SCALE;  // residual_scale left 0
  expect_error(try_create(lib, &m.desc(), "{}"), PLINTH_ERR_INVALID_ARGUMENT,
               "arch.residual_scale");
  arch.required_features = 0;
  m.desc().arch = nullptr;

  const auto view = [&](const std::string& name) -> plinth_tensor_view& {
    for (auto& v : m.views()) {
      if (name == v.name) return v;
    }
    throw std::runtime_error("no view " + name);
  };
  view("blk.1.attn_k.weight").dtype = 16;  // GGML_TYPE_IQ2_XXS: not in the format table
  expect_error(try_create(lib, &m.desc(), "{}"), PLINTH_ERR_UNSUPPORTED, "blk.1.attn_k.weight");
  view("blk.1.attn_k.weight").dtype = PLINTH_DTYPE_F32;

  view("blk.0.ffn_up.weight").dims[0] += 1;
  expect_error(try_create(lib, &m.desc(), "{}"), PLINTH_ERR_INVALID_ARGUMENT,
               "blk.0.ffn_up.weight");
  view("blk.0.ffn_up.weight").dims[0] -= 1;

  view("blk.0.attn_v.weight").name = "blk.0.attn_v.weight_renamed";
  expect_error(try_create(lib, &m.desc(), "{}"), PLINTH_ERR_INVALID_ARGUMENT,
               "blk.0.attn_v.weight is missing");
}

TEST(BackendCpuCreate, ValidatesItsConfig) {
  harness::Library lib;
  tiny::Model m;
  EXPECT_EQ(
      try_create(lib, &m.desc(), R"({"threads": 2, "kv_dtype": "f16", "max_batch_tokens": 64})")
          .first,
      PLINTH_OK);
  EXPECT_EQ(try_create(lib, &m.desc(), nullptr).first, PLINTH_OK);
  for (const char* path : {"auto", "float", "int8", "simd", "blas", "simd_blas"}) {
    const std::string c = std::string(R"({"matmul": ")") + path + "\"}";
    EXPECT_EQ(try_create(lib, &m.desc(), c.c_str()).first, PLINTH_OK) << c;
  }
  // Bad values are the host's to refuse, before create(), against the published schema.
  const auto host = [](const char* config) {
    return plinth::test::host_config(plinth::cpu::kConfigSchema, config).error;
  };
  for (const auto& [config, key] :
       {std::pair{R"({"matmul": "gpu"})", "config.matmul: "},
        std::pair{R"({"kv_dtype": "f8"})", "config.kv_dtype: "},
        std::pair{R"({"threads": 0})", "config.threads: "},
        std::pair{R"({"threads": 1025})", "config.threads: "},
        std::pair{R"({"max_batch_tokens": 0})", "config.max_batch_tokens: "},
        std::pair{R"({"max_batch_tokens": 1048577})", "config.max_batch_tokens: "},
        std::pair{R"({"block": 1})", "config.block: unknown option"}}) {
    EXPECT_NE(host(config).find(key), std::string::npos) << config << ": " << host(config);
  }
  // Created without the host, what C++ cannot read is still refused, naming the key.
  expect_error(try_create(lib, &m.desc(), R"({"matmul": "gpu"})"), PLINTH_ERR_INVALID_ARGUMENT,
               "matmul");
  expect_error(try_create(lib, &m.desc(), R"({"threads": "2"})"), PLINTH_ERR_INVALID_ARGUMENT,
               "threads");
  expect_error(try_create(lib, &m.desc(), R"({"threads": 0})"), PLINTH_ERR_INVALID_ARGUMENT,
               "threads");
}

TEST(BackendCpuCreate, ReportsLayoutAndMemory) {
  harness::Library lib;
  tiny::Model m;
  for (const auto& [config, bytes, dtype] :
       {std::tuple{"{}", 2 * 2 * 2 * 16 * 4, PLINTH_DTYPE_F32},
        std::tuple{R"({"kv_dtype": "f16"})", 2 * 2 * 2 * 16 * 2, PLINTH_DTYPE_F16}}) {
    Backend be(lib, m.desc(), config);
    plinth_kv_layout l{};
    plinth_error e = harness::make_error();
    ASSERT_EQ(be.vt().get_kv_layout(be.inst(), &l, &e), PLINTH_OK);
    EXPECT_EQ(l.bytes_per_token, static_cast<uint64_t>(bytes));
    EXPECT_EQ(l.n_layers, 2u);
    EXPECT_EQ(l.n_kv_heads, 2u);
    EXPECT_EQ(l.head_dim, 16u);
    EXPECT_EQ(l.dtype, dtype);
  }
  Backend be(lib, m.desc());
  plinth_memory_info mi{};
  plinth_error e = harness::make_error();
  ASSERT_EQ(be.vt().get_memory_info(be.inst(), &mi, &e), PLINTH_OK);
  EXPECT_EQ(mi.device_kind, PLINTH_DEVICE_CPU);
  EXPECT_GT(mi.free_bytes, 0u);
  EXPECT_LE(mi.free_bytes, mi.total_bytes);
  // Independent source: /proc/meminfo's MemTotal.
  std::ifstream in("/proc/meminfo");
  std::string key;
  uint64_t kb = 0;
  in >> key >> kb;
  ASSERT_EQ(key, "MemTotal:");
  EXPECT_EQ(mi.total_bytes, kb * 1024);
  EXPECT_EQ(be.vt().allocate_kv(be.inst(), 0, 16, &e), PLINTH_ERR_INVALID_ARGUMENT);
}

TEST(BackendCpuBatch, InvalidBatchesAreRefusedNamingTheField) {
  harness::Library lib;
  tiny::Model m;
  Backend be(lib, m.desc(), R"({"max_batch_tokens": 64})");
  // Before allocate_kv.
  {
    BatchBuilder bb({SeqStep{{0}, 0, {1, 2, 3}, false}}, 8);
    expect_error(be.forward_status(bb.batch), PLINTH_ERR_INVALID_ARGUMENT, "allocate_kv");
  }
  be.allocate(4, 8);
  const std::vector<SeqStep> good = {SeqStep{{2, 0}, 3, {5, 6, 7, 8, 9, 10}, false},
                                     SeqStep{{1}, 0, {11, 12}, true}};
  {
    BatchBuilder bb(good, 8);
    EXPECT_EQ(be.forward_status(bb.batch).first, PLINTH_OK);
  }
  const std::vector<std::pair<std::string, std::function<void(BatchBuilder&)>>> cases = {
      {"token_ids[1]", [](BatchBuilder& b) { b.token_ids[1] = 128; }},
      {"token_ids[0]", [](BatchBuilder& b) { b.token_ids[0] = -1; }},
      {"slot_mapping[2]", [](BatchBuilder& b) { b.slot_mapping[2] = 1000; }},
      {"slot_mapping[7]", [](BatchBuilder& b) { b.slot_mapping[7] = 10; }},
      {"positions[4]", [](BatchBuilder& b) { b.positions[4] = 2; }},
      {"query_start[2]", [](BatchBuilder& b) { b.query_start[2] = 7; }},
      {"query_start[1]", [](BatchBuilder& b) { b.query_start[1] = 9; }},
      {"seq_lens[0]", [](BatchBuilder& b) { b.seq_lens[0] = 300; }},
      {"seq_lens[1]", [](BatchBuilder& b) { b.seq_lens[1] = 1; }},
      {"block_tables[0][1]", [](BatchBuilder& b) { b.block_tables[1] = 4; }},
      {"block_tables[0][0]", [](BatchBuilder& b) { b.block_tables[0] = -1; }},
      {"logits_indices[1]", [](BatchBuilder& b) { b.logits_indices[1] = b.logits_indices[0]; }},
      {"logits_indices[2]", [](BatchBuilder& b) { b.logits_indices[2] = 8; }},
      {"block_size", [](BatchBuilder& b) { b.batch.block_size = 16; }},
      {"struct_size", [](BatchBuilder& b) { b.batch.struct_size = 8; }},
      {"token_ids", [](BatchBuilder& b) { b.batch.token_ids = nullptr; }},
      {"num_seqs", [](BatchBuilder& b) { b.batch.num_seqs = 0; }},
  };
  for (const auto& [field, mutate] : cases) {
    BatchBuilder bb(good, 8);
    mutate(bb);
    const auto r = be.forward_status(bb.batch);
    EXPECT_EQ(r.first, PLINTH_ERR_INVALID_ARGUMENT) << field << ": " << r.second;
    EXPECT_NE(r.second.find("batch." + field), std::string::npos) << field << ": " << r.second;
  }
  // More tokens than the scratch holds.
  std::vector<int32_t> many(65, 3);
  BatchBuilder big(
      {SeqStep{{0, 1, 2, 3}, 0, std::vector<int32_t>(many.begin(), many.begin() + 32), false},
       SeqStep{{0, 1, 2, 3}, 0, std::vector<int32_t>(many.begin(), many.begin() + 32), false},
       SeqStep{{0}, 0, {1}, false}},
      8);
  expect_error(be.forward_status(big.batch), PLINTH_ERR_INVALID_ARGUMENT, "max_batch_tokens");
  // After all the refusals, a good batch still runs.
  BatchBuilder bb(good, 8);
  EXPECT_EQ(be.forward_status(bb.batch).first, PLINTH_OK);
}

}  // namespace
