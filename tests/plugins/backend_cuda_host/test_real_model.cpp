// The real model (models/SmolLM2-135M-Instruct.Q4_1.gguf, tools/fetch_model): its first tensors
// converted to bf16 equal backend_cpu's dequantization rounded to bf16, and the bf16 weight
// bytes of the memory plan equal the file's element count * 2. Skips when the file is absent.
#include <gtest/gtest.h>

#include <filesystem>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "dequantize.hpp"
#include "memory_plan.hpp"
#include "model/gguf.hpp"
#include "model/model_config.hpp"
#include "model/model_desc.hpp"
#include "weight_convert.hpp"

namespace plinth::cuda {
namespace {

const std::string kModel =
    std::string(PLINTH_SOURCE_DIR) + "/models/SmolLM2-135M-Instruct.Q4_1.gguf";

cpu::WeightType cpu_type(int32_t d) {
  switch (d) {
    case PLINTH_DTYPE_F32:
      return cpu::WeightType::kF32;
    case PLINTH_DTYPE_F16:
      return cpu::WeightType::kF16;
    case PLINTH_DTYPE_BF16:
      return cpu::WeightType::kBF16;
    case PLINTH_DTYPE_Q8_0:
      return cpu::WeightType::kQ8_0;
    case PLINTH_DTYPE_Q4_0:
      return cpu::WeightType::kQ4_0;
    case PLINTH_DTYPE_Q4_1:
      return cpu::WeightType::kQ4_1;
    default:
      throw std::invalid_argument("unexpected dtype " + std::to_string(d));
  }
}

class RealModel : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!std::filesystem::exists(kModel)) {
      GTEST_SKIP() << "skipped: " << kModel << " is missing (run tools/fetch_model)";
    }
    file_ = GgufFile::open(kModel);
  }
  std::unique_ptr<GgufFile> file_;
};

TEST_F(RealModel, FirstTensorsMatchBackendCpu) {
  const std::vector<GgufTensor>& tensors = file_->tensors();
  ASSERT_GE(tensors.size(), 10u);
  std::vector<const GgufTensor*> picked;
  for (size_t i = 0; i < 10; ++i) picked.push_back(&tensors[i]);
  if (const GgufTensor* e = file_->find_tensor("token_embd.weight")) picked.push_back(e);
  bool saw_q4_1 = false;
  for (const GgufTensor* t : picked) {
    const plinth_tensor_view v = tensor_view(*t);
    const std::vector<uint16_t> out = to_bf16(v);
    const uint64_t n = t->num_elements();
    ASSERT_EQ(out.size(), n) << t->name;
    std::vector<float> ref(n);
    cpu::dequantize(cpu_type(v.dtype), v.data, 0, static_cast<int64_t>(n), ref.data());
    for (uint64_t i = 0; i < n; ++i) {
      ASSERT_EQ(out[i], f32_to_bf16(ref[i])) << t->name << " element " << i;
    }
    saw_q4_1 = saw_q4_1 || v.dtype == PLINTH_DTYPE_Q4_1;
  }
  EXPECT_TRUE(saw_q4_1) << "the Q4_1 model's first tensors should include Q4_1 ones";
}

TEST_F(RealModel, WeightBytesAreTheFilesElementsInBf16) {
  const ModelConfig mc = read_model_config(*file_);
  plinth_model_config c{};
  c.struct_size = sizeof c;
  c.n_layers = mc.n_layers;
  c.hidden_size = mc.hidden_size;
  c.n_heads = mc.n_heads;
  c.n_kv_heads = mc.n_kv_heads;
  c.head_dim = mc.head_dim;
  c.ffn_size = mc.ffn_size;
  c.vocab_size = mc.vocab_size;
  c.tied_embeddings = mc.tied_embeddings ? 1 : 0;
  uint64_t elements = 0;
  for (const GgufTensor& t : file_->tensors()) elements += t.num_elements();
  EXPECT_EQ(weight_bytes_bf16(c), 2 * elements);
  EXPECT_EQ(kv_bytes_per_token_bf16(c), 23040u);
}

}  // namespace
}  // namespace plinth::cuda
