// plinth manifest check FILE [--model PATH]: validates a manifest (every library loaded and its
// config checked against the plugin's schema), prints the pipeline in step order and, with a
// model, the KV memory plan: every plugin is created (so a plugin refusing
// its config or the model is caught), nothing but a speculator's draft KV is allocated; a draft
// model of another vocabulary than the target's is refused.
#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <optional>
#include <string>

#include "chat/chat_template.hpp"
#include "cli/commands.hpp"
#include "model/ggml_weight_mix.hpp"
#include "model/gguf.hpp"
#include "model/model_desc.hpp"
#include "runtime/call.hpp"
#include "runtime/draft_model.hpp"
#include "runtime/host_context.hpp"
#include "runtime/manifest.hpp"
#include "runtime/pipeline.hpp"
#include "tokenizer/tokenizer.hpp"

namespace plinth::cli {

namespace {

struct CheckOptions {
  std::string file;
  std::string model;
};

std::string dtype_name(int32_t dtype) {
  switch (dtype) {
    case PLINTH_DTYPE_F32:
      return "f32";
    case PLINTH_DTYPE_F16:
      return "f16";
    case PLINTH_DTYPE_BF16:
      return "bf16";
    default:
      return "dtype " + std::to_string(dtype);
  }
}

std::string gib(uint64_t bytes) {
  char buf[64];
  std::snprintf(buf, sizeof(buf), "%.2f GiB", static_cast<double>(bytes) / (1024.0 * 1024 * 1024));
  return buf;
}

// The memory plan from kv_cache.get_info and backend.get_kv_layout / get_memory_info.
void print_memory_plan(const Pipeline& p) {
  BackendRef b = p.backend();
  KvCacheRef kv = p.kv_cache();
  plinth_kv_layout layout{};
  layout.struct_size = sizeof(layout);
  plinth_memory_info mem{};
  mem.struct_size = sizeof(mem);
  plinth_kv_info info{};
  info.struct_size = sizeof(info);
  call(p.function_name(PLINTH_KIND_BACKEND, "get_kv_layout"),
       [&](plinth_error* e) { return b.vtable->get_kv_layout(b.instance, &layout, e); });
  call(p.function_name(PLINTH_KIND_BACKEND, "get_memory_info"),
       [&](plinth_error* e) { return b.vtable->get_memory_info(b.instance, &mem, e); });
  call(p.function_name(PLINTH_KIND_KV_CACHE, "get_info"),
       [&](plinth_error* e) { return kv.vtable->get_info(kv.instance, &info, e); });
  const uint64_t kv_bytes = info.bytes_per_block * info.num_blocks;
  std::printf("memory plan (kv_cache \"%s\" over backend \"%s\"):\n",
              p.plugin(PLINTH_KIND_KV_CACHE)->entry.name.c_str(),
              p.plugin(PLINTH_KIND_BACKEND)->entry.name.c_str());
  std::printf("  KV per token:     %llu bytes (%u layers x %u KV heads x %u head_dim x K,V, %s)\n",
              static_cast<unsigned long long>(layout.bytes_per_token), layout.n_layers,
              layout.n_kv_heads, layout.head_dim, dtype_name(layout.dtype).c_str());
  std::printf("  bytes per block:  %llu (%u tokens per block)\n",
              static_cast<unsigned long long>(info.bytes_per_block), info.block_size);
  std::printf("  number of blocks: %u (%s of KV cache)\n", info.num_blocks, gib(kv_bytes).c_str());
  std::printf("  KV capacity:      %llu tokens\n",
              static_cast<unsigned long long>(info.num_blocks) * info.block_size);
  std::printf("  device:           %s, %s free of %s\n",
              mem.device_kind == PLINTH_DEVICE_CUDA ? "cuda" : "cpu", gib(mem.free_bytes).c_str(),
              gib(mem.total_bytes).c_str());
  if (const PipelinePlugin* pc = p.plugin(PLINTH_KIND_PREFIX_CACHE)) {
    // The cache keeps blocks no running sequence holds; a max_cached_blocks option caps it.
    uint64_t cap = info.num_blocks;
    if (pc->config.is_object() && pc->config.contains("max_cached_blocks") &&
        pc->config["max_cached_blocks"].is_number_unsigned() &&
        pc->config["max_cached_blocks"].get<uint64_t>() > 0) {
      cap = std::min<uint64_t>(cap, pc->config["max_cached_blocks"].get<uint64_t>());
    }
    std::printf(
        "  prefix cache:     \"%s\" may hold up to %llu blocks (%s) of KV no running "
        "sequence needs; they are evicted (LRU) before anyone is preempted\n",
        pc->entry.name.c_str(), static_cast<unsigned long long>(cap),
        gib(cap * info.bytes_per_block).c_str());
  }
  BackendRef draft = p.draft_backend();
  if (draft) {
    plinth_kv_layout dl{};
    dl.struct_size = sizeof(dl);
    call(p.draft_plugin()->entry.name + ".get_kv_layout",
         [&](plinth_error* e) { return draft.vtable->get_kv_layout(draft.instance, &dl, e); });
    std::printf(
        "  draft backend:    \"%s\": %llu bytes of KV per token (%u layers x %u KV heads x %u "
        "head_dim x K,V, %s), allocated by the speculator, not part of the plan above\n",
        p.draft_plugin()->entry.name.c_str(), static_cast<unsigned long long>(dl.bytes_per_token),
        dl.n_layers, dl.n_kv_heads, dl.head_dim, dtype_name(dl.dtype).c_str());
  }
  if (info.bytes_per_block != layout.bytes_per_token * info.block_size) {
    std::printf("  warning: bytes per block != block size x KV bytes per token (%llu)\n",
                static_cast<unsigned long long>(layout.bytes_per_token) * info.block_size);
  }
}

std::string p_backend_name(const Pipeline& p) {
  const PipelinePlugin* b = p.plugin(PLINTH_KIND_BACKEND);
  return b != nullptr ? b->entry.name : std::string();
}

// The file's tensor type mix and the memory the backend's copies of its weights take (the SDK's
// format table: backend_cpu's panel layouts, backend_cuda's bf16).
std::string mib(uint64_t bytes) {
  char buf[64];
  std::snprintf(buf, sizeof(buf), "%.1f MiB", static_cast<double>(bytes) / (1024.0 * 1024));
  return buf;
}

void print_weights(const GgufFile& f, const std::string& backend) {
  std::printf("weights: %s\n", ggml_type_mix_text(ggml_type_mix(f)).c_str());
  if (backend.find("cuda") != std::string::npos) {
    std::printf("  backend \"%s\": bf16 matrices %s on the device\n", backend.c_str(),
                mib(ggml_bf16_matrix_bytes(f)).c_str());
  } else {
    std::printf(
        "  packed weights (backend_cpu panels): %s, besides the %s file mapping read in place\n",
        mib(ggml_cpu_panel_bytes(f)).c_str(), mib(f.size()).c_str());
  }
}

// The model's tokenizer (an unsupported one throws, naming the key and what would work) and chat
// template (unrecognised or absent: a note, since a base model serves completions only).
void print_tokenizer_and_chat(const GgufFile& file) {
  if (!file.has("tokenizer.ggml.model")) {  // a weights-only file: nothing to say about chat
    std::printf("tokenizer: none in the file (generate and serve need one)\n");
    return;
  }
  const Tokenizer tok = Tokenizer::from_gguf(file);
  const std::string pre =
      tok.model() == "gpt2" ? " (pre " + tok.pre_tokenizer_name() + ")" : std::string();
  std::printf("tokenizer: %s%s, %d tokens\n", tok.model().c_str(), pre.c_str(), tok.vocab_size());
  const auto tmpl = file.find_string("tokenizer.chat_template");
  if (!tmpl) {
    std::printf("chat template: none (a base model: chat needs --chat-template NAME|FILE)\n");
    return;
  }
  try {
    std::printf("chat template: %s\n",
                ChatTemplate::from_template_text(*tmpl, ChatTemplate::Options{}).family().c_str());
  } catch (const std::exception& e) {
    std::printf("chat template: not recognised, chat is refused: %s\n", e.what());
  }
}

void check_manifest(const CheckOptions& o) {
  ManifestOptions mo;
  if (!o.model.empty()) mo.model_override = o.model;
  Manifest manifest = load_manifest(o.file, mo);
  HostContext host(make_logger());
  std::unique_ptr<Pipeline> pipeline = Pipeline::load(manifest, host);
  std::error_code ec;
  const PluginEntry* draft = manifest.draft_backend();
  if (draft != nullptr && !std::filesystem::is_regular_file(*draft->model, ec)) {
    load_draft_model(manifest, *draft);  // throws: names plugins[i].model and the fix
  }
  // The model is read before "OK" is printed: a file that is not a usable GGUF (truncated, not
  // GGUF at all) fails the check with exit 2 naming it, as `generate` does, not after an "OK".
  std::optional<LoadedModel> loaded;
  if (manifest.model) {
    if (!std::filesystem::is_regular_file(*manifest.model, ec)) {
      throw ManifestError(manifest.file, o.model.empty() ? "model" : "--model",
                          "no model file " + manifest.model->string() +
                              ": fetch it (tools/fetch_model) or fix the path");
    }
    loaded = load_model(*manifest.model);  // GgufError: exit 2 (register_manifest)
  }
  std::printf("manifest %s: OK\n%s", o.file.c_str(), pipeline->describe().c_str());
  if (!loaded) {
    std::printf("memory plan: needs a model (set `model` in the manifest or pass --model)\n");
    return;
  }
  LoadedModel& model = *loaded;
  std::printf("model %s: %s, %u layers, hidden %u, %u heads (%u KV), vocab %u, features: %s\n",
              manifest.model->c_str(), model.config.architecture.c_str(), model.config.n_layers,
              model.config.hidden_size, model.config.n_heads, model.config.n_kv_heads,
              model.config.vocab_size,
              model.config.features == 0 ? "none (the plain LLaMA block)"
                                         : sdk::arch_feature_names(model.config.features).c_str());
  print_tokenizer_and_chat(*model.file);
  print_weights(*model.file, p_backend_name(*pipeline));
  // Every plugin: the prefix cache checks the kv_cache it is wired to at create, the speculator
  // its cross-option rules (min_n <= max_n, exit_layer below the layer count, the backend
  // extension layer_skip needs, a draft backend), the graph runner that its backend offers the
  // CUDA extension. The draft backend comes right after the backend; its model's vocabulary is
  // checked first. Only the speculator allocates (its draft model's KV, when it has one); the
  // graph runner captures nothing before capture(), which the check never calls.
  pipeline->instantiate(model, PLINTH_KIND_GRAPH_RUNNER);
  if (const LoadedModel* dm = pipeline->draft_model()) {
    std::printf(
        "draft model %s (%s): %s, %u layers, hidden %u, %u heads (%u KV), vocab %u, the same "
        "tokens as the target\n",
        dm->file->path().c_str(), pipeline->draft_plugin()->entry.json_path.c_str(),
        dm->config.architecture.c_str(), dm->config.n_layers, dm->config.hidden_size,
        dm->config.n_heads, dm->config.n_kv_heads, dm->config.vocab_size);
  }
  print_memory_plan(*pipeline);
  pipeline.reset();  // instances go before the model they point into
}

}  // namespace

void register_manifest(CLI::App& app) {
  CLI::App* manifest = app.add_subcommand("manifest", "Manifests");
  manifest->require_subcommand(1);
  auto opts = std::make_shared<CheckOptions>();
  CLI::App* check = manifest->add_subcommand(
      "check", "Validate a manifest; print the pipeline in step order and the KV memory plan");
  check->add_option("FILE", opts->file, "Manifest (JSON)")->required();
  check->add_option("--model", opts->model, "GGUF model file (overrides the manifest's `model`)");
  check->callback([opts] {
    try {
      check_manifest(*opts);
    } catch (const GgufError& e) {  // the model file: an input error, exit 2 as in `generate`
      std::fprintf(stderr, "error: %s\n", e.what());
      throw CLI::RuntimeError(kExitConfig);
    }
  });
}

}  // namespace plinth::cli
