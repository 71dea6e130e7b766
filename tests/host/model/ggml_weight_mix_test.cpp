// ggml_type_mix / ggml_cpu_panel_bytes / ggml_bf16_matrix_bytes (what `plinth manifest check`
// prints) on a small file of known shapes, against sizes computed by hand from the format table.
#include <gtest/gtest.h>

#include "gguf_test_files.hpp"
#include "model/ggml_weight_mix.hpp"
#include "model/gguf_writer.hpp"

namespace plinth {
namespace {

TEST(GgmlWeightMix, TypeMixAndPanelBytes) {
  GgufWriter w;
  w.add_string("general.architecture", "llama");
  // token_embd Q8_0 [64 x 40] (tied: no output.weight, so it is packed as the LM head),
  // a Q4_K [256 x 20], a Q6_K [512 x 16], a Q5_0 [32 x 3] and an F32 norm [64].
  const auto add = [&](const std::string& name, GgmlType t, std::vector<uint64_t> dims) {
    uint64_t n = 1;
    for (uint64_t d : dims) n *= d;
    const uint64_t bytes = n / ggml_block_size(t) * ggml_type_size(t);
    w.add_tensor(name, t, std::move(dims), std::vector<std::byte>(bytes, std::byte{0}));
  };
  add("token_embd.weight", GgmlType::kQ8_0, {64, 40});
  add("blk.0.ffn_down.weight", GgmlType::kQ4_K, {256, 20});
  add("blk.0.ffn_up.weight", GgmlType::kQ6_K, {512, 16});
  add("blk.0.attn_q.weight", GgmlType::kQ5_0, {32, 3});
  add("blk.0.attn_norm.weight", GgmlType::kF32, {64});
  test::TempDir dir;
  const auto f = GgufFile::open(dir.write("mix.gguf", w.build()));

  const auto mix = ggml_type_mix(*f);
  ASSERT_EQ(mix.size(), 5u);
  EXPECT_EQ(mix[0].type, "Q6_K");  // 16 rows x 2 blocks x 210 = 6720 bytes: the most
  EXPECT_EQ(mix[0].bytes, 6720u);
  EXPECT_EQ(mix[0].tensors, 1u);
  EXPECT_EQ(mix[1].type, "Q4_K");  // 20 x 144 = 2880
  EXPECT_EQ(mix[1].bytes, 2880u);
  EXPECT_EQ(mix[2].type, "Q8_0");  // 40 x 2 x 34 = 2720
  EXPECT_EQ(mix[2].bytes, 2720u);
  EXPECT_NE(ggml_type_mix_text(mix).find("Q5_0 1 tensors"), std::string::npos);

  // Panels: ceil(rows / 16) x (cols / 32) x the layout's block bytes (ggml_format.hpp): the
  // file's bytes of the rows padded to a multiple of 16.
  const uint64_t q8 = 3 * 2 * 544;   // token_embd, tied: 48 rows x 2 blocks x 34
  const uint64_t k4 = 2 * 8 * 288;   // Q4_K -> K4: 32 rows x 144
  const uint64_t k6 = 1 * 16 * 420;  // Q6_K -> K6: 16 rows x 2 x 210, the file size
  const uint64_t q5 = 1 * 1 * 352;   // Q5_0 -> Q5 panels: 16 rows x 22
  EXPECT_EQ(k4, 32u * 144u);
  EXPECT_EQ(k6, 6720u);
  EXPECT_EQ(ggml_cpu_panel_bytes(*f), q8 + k4 + k6 + q5);
  EXPECT_EQ(ggml_bf16_matrix_bytes(*f), 2u * (64 * 40 + 256 * 20 + 512 * 16 + 32 * 3));
}

}  // namespace
}  // namespace plinth
