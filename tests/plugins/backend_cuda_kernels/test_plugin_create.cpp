// The backend_cuda plugin library through its C ABI (dlopen): the descriptor, the config schema,
// and create's refusals: a model lacking tensors is refused naming the first missing tensor before
// the device is touched; without a device "no CUDA device" (UNSUPPORTED) once the model passed
// its checks. Every
// synthetic architecture passes the model checks; unknown weight types are UNSUPPORTED, named.
#include <cuda_runtime.h>
#include <dlfcn.h>
#include <gtest/gtest.h>

#include <unistd.h>

#include <filesystem>
#include <string>
#include <utility>
#include <vector>

#include "device_weights.hpp"
#include "model/model_desc.hpp"
#include "model/synthetic_arch.hpp"
#include "plinth/backend.h"
#include "plinth/ggml_format.hpp"

namespace {

struct Plugin {
  void* lib = nullptr;
  const plinth_plugin_descriptor* desc = nullptr;
  Plugin() {
    const std::string path = std::string(PLINTH_PLUGIN_DIR) + "/libplinth_backend_cuda.so";
    lib = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (lib == nullptr) return;
    auto entry = reinterpret_cast<plinth_plugin_entry_fn>(dlsym(lib, PLINTH_PLUGIN_ENTRY_SYMBOL));
    if (entry != nullptr) desc = entry();
  }
  ~Plugin() {
    if (lib != nullptr) dlclose(lib);
  }
};

bool have_device() {
  int n = 0;
  return cudaGetDeviceCount(&n) == cudaSuccess && n > 0;
}

}  // namespace

TEST(BackendCudaPlugin, DescriptorAndCreateRefusal) {
  Plugin p;
  ASSERT_NE(p.lib, nullptr) << dlerror();
  ASSERT_NE(p.desc, nullptr);
  EXPECT_STREQ(p.desc->name, "backend_cuda");
  EXPECT_EQ(p.desc->kind, PLINTH_KIND_BACKEND);
  EXPECT_EQ(p.desc->abi_minor, PLINTH_ABI_MINOR);
  ASSERT_NE(p.desc->config_schema, nullptr);
  EXPECT_NE(std::string(p.desc->config_schema).find("\"gemm\""), std::string::npos);
  const auto* vt = static_cast<const plinth_backend_vtable*>(p.desc->vtable);
  ASSERT_NE(vt, nullptr);
  ASSERT_NE(vt->lifecycle.create, nullptr);

  // SmolLM2-135M's shape, no tensors.
  plinth_model_desc model{};
  model.struct_size = sizeof model;
  model.config.struct_size = sizeof model.config;
  model.config.architecture = "llama";
  model.config.n_layers = 30;
  model.config.hidden_size = 576;
  model.config.n_heads = 9;
  model.config.n_kv_heads = 3;
  model.config.head_dim = 64;
  model.config.ffn_size = 1536;
  model.config.vocab_size = 49152;
  model.config.context_length = 8192;
  model.config.rope_theta = 100000.0f;
  model.config.rms_norm_eps = 1e-5f;
  model.config.tied_embeddings = 1;
  model.path = "synthetic.gguf";
  plinth_create_args args{};
  args.struct_size = sizeof args;
  args.config_json = "{\"device\": 0}";
  args.model = &model;
  plinth_instance* inst = nullptr;
  plinth_error err{};
  err.struct_size = sizeof err;
  const int32_t st = vt->lifecycle.create(&args, &inst, &err);
  EXPECT_EQ(inst, nullptr);
  // The model's tensors are checked before the device is touched (device or not).
  EXPECT_EQ(st, PLINTH_ERR_INVALID_ARGUMENT) << err.message;
  EXPECT_NE(std::string(err.message).find("token_embd.weight is missing"), std::string::npos)
      << err.message;

  // A bad config is refused before the device is touched, naming the key.
  args.config_json = "{\"gemm\": \"quick\"}";
  EXPECT_EQ(vt->lifecycle.create(&args, &inst, &err), PLINTH_ERR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(err.message).find("gemm"), std::string::npos) << err.message;

  // A feature bit this build does not know (a later ABI's) is named, before the device is
  // touched; every bit of ABI 1.4 is implemented (backends implement features, never
  // architecture names): the model then fails only at the device or the missing tensors.
  std::vector<plinth_arch_layer> layers(30, plinth_arch_layer{100000.0f, 1.0f, 1, 0});
  plinth_arch_desc arch{};
  arch.struct_size = sizeof arch;
  arch.layer_stride = sizeof(plinth_arch_layer);
  arch.required_features = PLINTH_ARCH_QK_NORM | PLINTH_ARCH_GELU_TANH | (1ull << 20);
  arch.rope_dims = 64;
  arch.embed_scale = arch.logit_scale = 1.0f;
  arch.n_layers = 30;
  arch.layers = layers.data();
  model.arch = &arch;
  model.config.architecture = "gemma3";
  args.config_json = "{\"device\": 0}";
  EXPECT_EQ(vt->lifecycle.create(&args, &inst, &err), PLINTH_ERR_UNSUPPORTED);
  EXPECT_NE(
      std::string(err.message).find("architecture features this build does not know (bit 20)"),
      std::string::npos)
      << err.message;
  arch.required_features = PLINTH_ARCH_QK_NORM | PLINTH_ARCH_GELU_TANH | PLINTH_ARCH_FUSED_QKV;
  EXPECT_EQ(vt->lifecycle.create(&args, &inst, &err), PLINTH_ERR_INVALID_ARGUMENT) << err.message;
  EXPECT_EQ(inst, nullptr);
  EXPECT_NE(std::string(err.message).find("token_embd.weight is missing"), std::string::npos)
      << err.message;
}

// Every synthetic architecture (`plinth synth-model --arch`) passes backend_cuda's model checks
// (features, head_dim, tensor names, shapes and types): without a device create then fails only
// at "no CUDA device"; with one it succeeds. (One needing a feature bit outside
// kImplementedFeatures is refused naming it.) Weight types: a matrix of a type outside the SDK's
// format table and a norm vector that is not F32/F16/BF16 are UNSUPPORTED naming the tensor, as
// backend_cpu answers, before the device is touched.
class BackendCudaArch : public ::testing::TestWithParam<std::string> {};

TEST_P(BackendCudaArch, ModelChecksPassAndWeightTypesAreNamed) {
  Plugin p;
  ASSERT_NE(p.desc, nullptr) << dlerror();
  const auto* vt = static_cast<const plinth_backend_vtable*>(p.desc->vtable);
  const std::filesystem::path file =
      std::filesystem::temp_directory_path() /
      ("plinth_cuda_create_" + GetParam() + "_" + std::to_string(::getpid()) + ".gguf");
  plinth::ArchModelOptions o;
  o.arch = GetParam();
  o.dtype = plinth::GgmlType::kBF16;
  plinth::make_arch_model(o).write_file(file.string());
  const plinth::LoadedModel m = plinth::load_model(file);
  plinth_model_desc model = *m.desc->get();
  plinth_create_args args{};
  args.struct_size = sizeof args;
  args.config_json = R"({"memory_fraction": 0.05, "max_num_tokens": 256, "max_num_seqs": 8})";
  args.model = &model;
  plinth_instance* inst = nullptr;
  plinth_error err{};
  err.struct_size = sizeof err;
  const int32_t st = vt->lifecycle.create(&args, &inst, &err);
  // An architecture needing a feature bit backend_cuda does not implement (one added to the
  // description after its generic block) is refused, naming the bits: the contract of model.h.
  const uint64_t missing =
      plinth::sdk::read_model_spec(model).features & ~plinth::cuda::kImplementedFeatures;
  if (missing != 0) {
    EXPECT_EQ(st, PLINTH_ERR_UNSUPPORTED) << err.message;
    EXPECT_NE(std::string(err.message)
                  .find("needs " + plinth::sdk::arch_feature_names(missing) +
                        ", which backend_cuda does not implement"),
              std::string::npos)
        << err.message;
    std::filesystem::remove(file);
    return;
  }
  if (have_device()) {
    EXPECT_EQ(st, PLINTH_OK) << err.message;
    if (inst != nullptr) vt->lifecycle.destroy(inst);
  } else {
    EXPECT_EQ(st, PLINTH_ERR_UNSUPPORTED) << err.message;
    EXPECT_NE(std::string(err.message).find("no CUDA device"), std::string::npos) << err.message;
  }

  std::vector<plinth_tensor_view> views(model.tensors, model.tensors + model.num_tensors);
  model.tensors = views.data();
  const auto find = [&](const std::string& name) -> plinth_tensor_view& {
    for (plinth_tensor_view& v : views) {
      if (v.name != nullptr && name == v.name) return v;
    }
    ADD_FAILURE() << "no tensor " << name;
    return views.front();
  };
  plinth_tensor_view& down = find("blk.1.ffn_down.weight");
  const int32_t down_type = down.dtype;
  for (const auto& [id, name] :
       {std::pair{99, "type 99 (unknown to ggml)"}, std::pair{16, "type 16 (IQ2_XXS)"}}) {
    down.dtype = id;  // no ggml type; a ggml type outside the SDK's format table
    inst = nullptr;
    EXPECT_EQ(vt->lifecycle.create(&args, &inst, &err), PLINTH_ERR_UNSUPPORTED);
    EXPECT_EQ(inst, nullptr);
    EXPECT_NE(std::string(err.message)
                  .find(std::string("tensor blk.1.ffn_down.weight has ggml ") + name +
                        ", which backend_cuda cannot read"),
              std::string::npos)
        << err.message;
  }
  // Every type of the format table passes the type check (the quantized K-quants and IQ4 types
  // included, which the loader once refused); without a device create then stops at the device.
  if (!have_device()) {
    for (const plinth::ggml::Format& f : plinth::ggml::kFormats) {
      down.dtype = f.id;
      EXPECT_EQ(vt->lifecycle.create(&args, &inst, &err), PLINTH_ERR_UNSUPPORTED) << f.name;
      EXPECT_NE(std::string(err.message).find("no CUDA device"), std::string::npos)
          << f.name << ": " << err.message;
    }
  }
  down.dtype = down_type;
  find("output_norm.weight").dtype = PLINTH_DTYPE_Q8_0;  // a quantized norm (every arch has it)
  EXPECT_EQ(vt->lifecycle.create(&args, &inst, &err), PLINTH_ERR_UNSUPPORTED);
  EXPECT_NE(std::string(err.message)
                .find("vector tensor output_norm.weight (Q8_0) must be F32, F16 or BF16"),
            std::string::npos)
      << err.message;
  std::filesystem::remove(file);
}

std::vector<std::string> arch_names() {
  std::vector<std::string> out;
  for (const char* a : plinth::synthetic_architectures()) out.emplace_back(a);
  return out;
}

INSTANTIATE_TEST_SUITE_P(EveryArchitecture, BackendCudaArch, ::testing::ValuesIn(arch_names()),
                         [](const ::testing::TestParamInfo<std::string>& i) { return i.param; });
