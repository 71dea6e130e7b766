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
  h->open_model(*manifest.model, options);
  h->tokenizer_ = std::make_unique<Tokenizer>(Tokenizer::from_gguf(*h->model_.file));
  h->load_chat_template(options, host);
  h->collect_stop_ids();
  // Over the opened file: a draft backend's vocabulary is compared with it (runtime/draft_model).
  h->pipeline_ = Pipeline::create(manifest, h->model_, host);
  h->allocate_kv(options, host);
  // Graphs are captured over the allocated KV cache (lazily: this only prepares their buffers,
  // unless the runner's eager_capture asks for every size now).
  if (GraphRunnerRef graph = h->pipeline_->graph_runner()) {
    call(h->pipeline_->function_name(PLINTH_KIND_GRAPH_RUNNER, "capture"),
         [&](plinth_error* e) { return graph.vtable->capture(graph.instance, e); });
  }
  h->start_grammar(host);
  h->make_engine();
  return h;
}

void EngineHost::open_model(const std::filesystem::path& path, const Options& options) {
  model_path_ = path;
  model_ = load_model(model_path_);
  model_name_ = model_.config.name.empty() ? model_path_.stem().string() : model_.config.name;
  const uint32_t context = model_.config.context_length;
  if (options.max_model_len > context) {
    throw std::invalid_argument("--max-model-len " + std::to_string(options.max_model_len) +
                                " exceeds the model's context length " + std::to_string(context) +
                                "; give at most " + std::to_string(context) + " (or 0 for it)");
  }
  max_model_len_ = options.max_model_len > 0 ? options.max_model_len : context;
}

void EngineHost::load_chat_template(const Options& options, HostContext& host) {
  const GgufFile& file = *model_.file;
  const Tokenizer& tok = *tokenizer_;
  ChatTemplate::Options co;
  co.bos_token = tok.bos_id() >= 0 ? tok.token_to_bytes(tok.bos_id()) : "";
  co.eos_token = tok.eos_id() >= 0 ? tok.token_to_bytes(tok.eos_id()) : "";
  co.is_special_token = [&tok](std::string_view text) {
    const auto id = tok.find_token(text);
    return id && tok.is_special(*id);
  };
  if (!options.chat_template.empty()) {
    chat_ =
        std::make_unique<ChatTemplate>(ChatTemplate::from_name_or_file(options.chat_template, co));
  } else if (auto tmpl = file.find_string("tokenizer.chat_template")) {
    try {
      chat_ = std::make_unique<ChatTemplate>(ChatTemplate::from_template_text(*tmpl, co));
    } catch (const std::exception& e) {
      chat_error_ = e.what();
    }
  } else {
    chat_error_ = "the model file has no tokenizer.chat_template; pass --chat-template NAME|FILE";
  }
  if (chat_) host.logger().info("chat template: {}", chat_->family());
}

void EngineHost::collect_stop_ids() {
  // Stop tokens: EOS, and the chat template's end-of-turn markers when they are single tokens.
  if (tokenizer_->eos_id() >= 0) stop_ids_.push_back(tokenizer_->eos_id());
  if (chat_) {
    for (const std::string& text : chat_->stop_texts()) {
      if (auto id = tokenizer_->find_token(text)) stop_ids_.push_back(*id);
    }
  }
  std::sort(stop_ids_.begin(), stop_ids_.end());
  stop_ids_.erase(std::unique(stop_ids_.begin(), stop_ids_.end()), stop_ids_.end());
}

void EngineHost::allocate_kv(const Options& options, HostContext& host) {
  KvCacheRef kv = pipeline_->kv_cache();
  BackendRef backend = pipeline_->backend();
  plinth_kv_info info{};
  info.struct_size = sizeof(info);
  call(pipeline_->function_name(PLINTH_KIND_KV_CACHE, "get_info"),
       [&](plinth_error* e) { return kv.vtable->get_info(kv.instance, &info, e); });
  call(pipeline_->function_name(PLINTH_KIND_BACKEND, "allocate_kv"), [&](plinth_error* e) {
    return backend.vtable->allocate_kv(backend.instance, info.num_blocks, info.block_size, e);
  });
  host.logger().info("KV cache: {} blocks of {} tokens ({} tokens, {:.1f} MiB)", info.num_blocks,
                     info.block_size, uint64_t{info.num_blocks} * info.block_size,
                     double(info.bytes_per_block) * info.num_blocks / (1 << 20));
  // As vLLM: the pool must hold one whole sequence of max_model_len, else a request the server
  // admits (its default max_tokens is the rest of max_model_len) could never run.
  const uint64_t pool_tokens = uint64_t{info.num_blocks} * info.block_size;
  const uint64_t blocks_needed = (max_model_len_ + info.block_size - 1) / info.block_size;
  if (pool_tokens < max_model_len_) {
    const std::string need =
        std::string(options.max_model_len > 0 ? "--max-model-len "
                                              : "the model's context length ") +
        std::to_string(max_model_len_) + " needs " + std::to_string(blocks_needed) +
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
}

void EngineHost::start_grammar(HostContext& host) {
  // The grammar plugin (structured outputs) over the tokenizer's vocabulary: each token's bytes
  // and type, and the stop ids (allowed only where a grammar can end).
  if (pipeline_->plugin(PLINTH_KIND_GRAMMAR) != nullptr) {
    const Tokenizer& t = *tokenizer_;
    std::vector<plinth_grammar_token> tokens(static_cast<size_t>(model_.config.vocab_size));
    for (size_t i = 0; i < tokens.size(); ++i) {
      const auto id = static_cast<int32_t>(i);
      if (id >= t.vocab_size()) {  // rows past the tokenizer: never text
        tokens[i] = {nullptr, 0, static_cast<int32_t>(TokenType::kUnused)};
        continue;
      }
      const std::string& bytes = t.token_to_bytes(id);
      tokens[i] = {bytes.data(), static_cast<uint32_t>(bytes.size()),
                   static_cast<int32_t>(t.token_type(id))};
    }
    plinth_grammar_vocab vocab{};
    vocab.struct_size = sizeof vocab;
    vocab.vocab_size = static_cast<uint32_t>(tokens.size());
    vocab.tokens = tokens.data();
    vocab.stop_ids = stop_ids_.data();
    vocab.num_stop_ids = static_cast<uint32_t>(stop_ids_.size());
    pipeline_->instantiate_grammar(vocab);
    host.logger().info("grammar plugin \"{}\" ready over {} tokens",
                       pipeline_->plugin(PLINTH_KIND_GRAMMAR)->entry.name, vocab.vocab_size);
  }
  const PipelinePlugin* g = pipeline_->plugin(PLINTH_KIND_GRAMMAR);
  // Compile and mask times, cache hits and constrained requests on /metrics (with a plugin only).
  std::shared_ptr<GrammarMetrics> metrics =
      g != nullptr ? std::make_shared<GrammarMetrics>(host.metrics()) : nullptr;
  grammar_ = std::make_unique<GrammarCompiler>(
      pipeline_->grammar(), g != nullptr ? g->entry.name : "grammar", std::move(metrics));
}

void EngineHost::make_engine() {
  EnginePlugins plugins;
  plugins.backend = pipeline_->backend();
  plugins.kv_cache = pipeline_->kv_cache();
  plugins.scheduler = pipeline_->scheduler();
  plugins.prefix_cache = pipeline_->prefix_cache();
  plugins.speculator = pipeline_->speculator();
  plugins.speculator_abi_minor = pipeline_->abi_minor(PLINTH_KIND_SPECULATOR);
  plugins.scheduler_abi_minor = pipeline_->abi_minor(PLINTH_KIND_SCHEDULER);
  plugins.graph_runner = pipeline_->graph_runner();
  plugins.host_api = &pipeline_->plugin_host_api();
  auto name_of = [&](plinth_plugin_kind kind, std::string& out) {
    if (const PipelinePlugin* p = pipeline_->plugin(kind)) out = p->entry.name;
  };
  name_of(PLINTH_KIND_BACKEND, plugins.names.backend);
  name_of(PLINTH_KIND_KV_CACHE, plugins.names.kv_cache);
  name_of(PLINTH_KIND_SCHEDULER, plugins.names.scheduler);
  name_of(PLINTH_KIND_GRAPH_RUNNER, plugins.names.graph_runner);
  name_of(PLINTH_KIND_SPECULATOR, plugins.names.speculator);
  EngineOptions eo;
  eo.context_length = max_model_len_;
  eo.vocab_size = model_.config.vocab_size;
  eo.eos_token_ids = stop_ids_;
  engine_ = std::make_unique<Engine>(plugins, *tokenizer_, eo);
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
