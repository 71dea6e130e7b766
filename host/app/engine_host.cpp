#include "app/engine_host.hpp"

#include <algorithm>
#include <stdexcept>

#include "runtime/call.hpp"
#include "runtime/manifest.hpp"

namespace plinth {

std::unique_ptr<EngineHost> EngineHost::load(const Options& options, HostContext& host) {
  ManifestOptions mo;
  mo.model_override = options.model;
  Manifest manifest = load_manifest(options.manifest, mo);
  if (!manifest.model) {
    throw ManifestError(manifest.file, "model",
                        "no model given: add \"model\": \"<path to a .gguf>\" to the manifest or "
                        "pass --model PATH");
  }

  std::unique_ptr<EngineHost> h(new EngineHost());
  h->model_path_ = *manifest.model;
  h->model_ = load_model(h->model_path_);
  const GgufFile& file = *h->model_.file;
  h->model_name_ =
      h->model_.config.name.empty() ? h->model_path_.stem().string() : h->model_.config.name;
  const uint32_t context = h->model_.config.context_length;
  if (options.max_model_len > context) {
    throw std::invalid_argument("--max-model-len " + std::to_string(options.max_model_len) +
                                " exceeds the model's context length " + std::to_string(context) +
                                "; give at most " + std::to_string(context) + " (or 0 for it)");
  }
  h->max_model_len_ = options.max_model_len > 0 ? options.max_model_len : context;
  h->tokenizer_ = std::make_unique<Tokenizer>(Tokenizer::from_gguf(file));
  const Tokenizer& tok = *h->tokenizer_;
  ChatTemplate::Options co;
  co.bos_token = tok.bos_id() >= 0 ? tok.token_to_bytes(tok.bos_id()) : "";
  co.eos_token = tok.eos_id() >= 0 ? tok.token_to_bytes(tok.eos_id()) : "";
  co.is_special_token = [&tok](std::string_view text) {
    const auto id = tok.find_token(text);
    return id && tok.is_special(*id);
  };
  if (!options.chat_template.empty()) {
    h->chat_ =
        std::make_unique<ChatTemplate>(ChatTemplate::from_name_or_file(options.chat_template, co));
  } else if (auto tmpl = file.find_string("tokenizer.chat_template")) {
    try {
      h->chat_ = std::make_unique<ChatTemplate>(ChatTemplate::from_template_text(*tmpl, co));
    } catch (const std::exception& e) {
      h->chat_error_ = e.what();
    }
  } else {
    h->chat_error_ =
        "the model file has no tokenizer.chat_template; pass --chat-template NAME|FILE";
  }
  if (h->chat_) host.logger().info("chat template: {}", h->chat_->family());

  // Stop tokens: EOS, and the chat template's end-of-turn markers when they are single tokens.
  if (h->tokenizer_->eos_id() >= 0) h->stop_ids_.push_back(h->tokenizer_->eos_id());
  if (h->chat_) {
    for (const std::string& text : h->chat_->stop_texts()) {
      if (auto id = h->tokenizer_->find_token(text)) h->stop_ids_.push_back(*id);
    }
  }
  std::sort(h->stop_ids_.begin(), h->stop_ids_.end());
  h->stop_ids_.erase(std::unique(h->stop_ids_.begin(), h->stop_ids_.end()), h->stop_ids_.end());

  // Over the opened file: a draft backend's vocabulary is compared with it (runtime/draft_model).
  h->pipeline_ = Pipeline::create(manifest, h->model_, host);
  KvCacheRef kv = h->pipeline_->kv_cache();
  BackendRef backend = h->pipeline_->backend();
  plinth_kv_info info{};
  info.struct_size = sizeof(info);
  call(h->pipeline_->function_name(PLINTH_KIND_KV_CACHE, "get_info"),
       [&](plinth_error* e) { return kv.vtable->get_info(kv.instance, &info, e); });
  call(h->pipeline_->function_name(PLINTH_KIND_BACKEND, "allocate_kv"), [&](plinth_error* e) {
    return backend.vtable->allocate_kv(backend.instance, info.num_blocks, info.block_size, e);
  });
  host.logger().info("KV cache: {} blocks of {} tokens ({} tokens, {:.1f} MiB)", info.num_blocks,
                     info.block_size, uint64_t{info.num_blocks} * info.block_size,
                     double(info.bytes_per_block) * info.num_blocks / (1 << 20));
  // As vLLM: the pool must hold one whole sequence of max_model_len, else a request the server
  // admits (its default max_tokens is the rest of max_model_len) could never run.
  const uint64_t pool_tokens = uint64_t{info.num_blocks} * info.block_size;
  const uint64_t blocks_needed = (h->max_model_len_ + info.block_size - 1) / info.block_size;
  if (pool_tokens < h->max_model_len_) {
    const std::string need =
        std::string(options.max_model_len > 0 ? "--max-model-len "
                                              : "the model's context length ") +
        std::to_string(h->max_model_len_) + " needs " + std::to_string(blocks_needed) +
        " KV blocks of " + std::to_string(info.block_size) + " tokens, but the pool has " +
        std::to_string(info.num_blocks) + " (" + std::to_string(pool_tokens) + " tokens)";
    if (options.max_model_len > 0) {
      throw std::invalid_argument(
          need + "; lower --max-model-len to <= " + std::to_string(pool_tokens) +
          " or give the kv_cache more blocks (num_blocks >= " + std::to_string(blocks_needed) +
          " or a larger max_memory_mb)");
    }
    host.logger().warn(
        "{}: requests that cannot fit are refused with 400; pass "
        "--max-model-len <= {} to bound them (and the default max_tokens) to the pool",
        need, pool_tokens);
  }
  // Graphs are captured over the allocated KV cache (lazily: this only prepares their buffers,
  // unless the runner's eager_capture asks for every size now).
  GraphRunnerRef graph = h->pipeline_->graph_runner();
  if (graph) {
    call(h->pipeline_->function_name(PLINTH_KIND_GRAPH_RUNNER, "capture"),
         [&](plinth_error* e) { return graph.vtable->capture(graph.instance, e); });
  }

  EnginePlugins plugins;
  plugins.backend = backend;
  plugins.kv_cache = kv;
  plugins.scheduler = h->pipeline_->scheduler();
  plugins.prefix_cache = h->pipeline_->prefix_cache();
  plugins.speculator = h->pipeline_->speculator();
  plugins.speculator_abi_minor = h->pipeline_->abi_minor(PLINTH_KIND_SPECULATOR);
  plugins.scheduler_abi_minor = h->pipeline_->abi_minor(PLINTH_KIND_SCHEDULER);
  plugins.graph_runner = graph;
  plugins.host_api = &h->pipeline_->plugin_host_api();
  auto name_of = [&](plinth_plugin_kind kind, std::string& out) {
    if (const PipelinePlugin* p = h->pipeline_->plugin(kind)) out = p->entry.name;
  };
  name_of(PLINTH_KIND_BACKEND, plugins.names.backend);
  name_of(PLINTH_KIND_KV_CACHE, plugins.names.kv_cache);
  name_of(PLINTH_KIND_SCHEDULER, plugins.names.scheduler);
  name_of(PLINTH_KIND_GRAPH_RUNNER, plugins.names.graph_runner);
  EngineOptions eo;
  eo.context_length = h->max_model_len_;
  eo.vocab_size = h->model_.config.vocab_size;
  eo.eos_token_ids = h->stop_ids_;
  h->engine_ = std::make_unique<Engine>(plugins, *h->tokenizer_, eo);
  return h;
}

EngineHost::~EngineHost() {
  engine_.reset();  // returns its blocks before the plugins go
  pipeline_.reset();
}

std::vector<int32_t> EngineHost::encode(std::string_view text) const {
  return tokenizer_->encode(text, /*add_special=*/true);
}

std::vector<int32_t> EngineHost::encode_chat(const std::vector<ChatMessage>& messages,
                                             const ChatTemplate::RenderOptions& options) const {
  if (!chat_) {
    throw std::invalid_argument("chat: this model has no chat template plinth recognises (" +
                                chat_error_ + "); send a plain prompt instead");
  }
  std::vector<Tokenizer::Segment> segments;
  for (const ChatTemplate::Segment& s :
       chat_->render(messages, /*add_generation_prompt=*/true, options)) {
    segments.push_back({s.text, s.special});
  }
  return tokenizer_->encode_segments(segments, /*add_special=*/true);
}

}  // namespace plinth
