// The backend_cuda plugin library through its C ABI (dlopen): the descriptor, the config schema,
// and create's refusals: without a device "no CUDA device" (UNSUPPORTED) before any tensor is
// read; with one, a model lacking tensors is refused naming the first missing tensor.
#include <cuda_runtime.h>
#include <dlfcn.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "plinth/backend.h"

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
  if (have_device()) {
    EXPECT_EQ(st, PLINTH_ERR_INVALID_ARGUMENT) << err.message;
    EXPECT_NE(std::string(err.message).find("token_embd.weight is missing"), std::string::npos)
        << err.message;
  } else {
    EXPECT_EQ(st, PLINTH_ERR_UNSUPPORTED) << err.message;
    EXPECT_NE(std::string(err.message).find("no CUDA device"), std::string::npos) << err.message;
  }

  // A bad config is refused before the device is touched, naming the key.
  args.config_json = "{\"gemm\": \"quick\"}";
  EXPECT_EQ(vt->lifecycle.create(&args, &inst, &err), PLINTH_ERR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(err.message).find("gemm"), std::string::npos) << err.message;

  // An architecture feature backend_cuda does not implement (ABI 1.4) is named, before the
  // device is touched: backends implement features, never architecture names.
  std::vector<plinth_arch_layer> layers(30, plinth_arch_layer{100000.0f, 1.0f, 1, 0});
  plinth_arch_desc arch{};
  arch.struct_size = sizeof arch;
  arch.layer_stride = sizeof(plinth_arch_layer);
  arch.required_features = PLINTH_ARCH_QK_NORM | PLINTH_ARCH_GELU_TANH | PLINTH_ARCH_FUSED_QKV;
  arch.rope_dims = 64;
  arch.embed_scale = arch.logit_scale = 1.0f;
  arch.n_layers = 30;
  arch.layers = layers.data();
  model.arch = &arch;
  model.config.architecture = "gemma3";
  args.config_json = "{\"device\": 0}";
  EXPECT_EQ(vt->lifecycle.create(&args, &inst, &err), PLINTH_ERR_UNSUPPORTED);
  EXPECT_NE(std::string(err.message)
                .find("needs qk_norm, gelu_tanh, which backend_cuda does not "
                      "implement"),
            std::string::npos)
      << err.message;
}
