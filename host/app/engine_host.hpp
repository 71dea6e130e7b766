#pragma once
// EngineHost: everything one served model needs, assembled from a manifest (docs/manifest.md;
// docs/architecture.md, "Loading"): the memory-mapped GGUF file and its config, the tokenizer and
// chat template from its metadata, the plugin pipeline with the backend's KV cache allocated to the
// kv_cache plugin's pool (and the graph runner's capture() called over it), and the engine that
// drives them.

#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "chat/chat_template.hpp"
#include "engine/engine.hpp"
#include "model/model_desc.hpp"
#include "runtime/host_context.hpp"
#include "runtime/pipeline.hpp"
#include "tokenizer/tokenizer.hpp"

namespace plinth {

class EngineHost {
 public:
  struct Options {
    std::filesystem::path manifest;              ///< the manifest file
    std::optional<std::filesystem::path> model;  ///< overrides the manifest's `model`
    /// Longest sequence (prompt + generated tokens) the engine runs, as vLLM's max_model_len;
    /// 0 = the model's context length. Must not exceed it, and the KV pool must hold one
    /// sequence of it (checked at load). Bounds every request's default max_tokens.
    uint32_t max_model_len = 0;
    /// `--chat-template NAME|FILE`: a family name (ChatTemplate::known_families()) or a Jinja
    /// template file, used instead of the model's `tokenizer.chat_template`; "" = the model's.
    std::string chat_template;
  };

  /// Loads the manifest, maps the model, builds tokenizer and chat template, creates the pipeline,
  /// allocates the backend's KV cache and the engine. `host` must outlive the result.
  /// Throws ManifestError (manifest mistakes, no model given, a draft backend's model missing,
  /// unusable or of another vocabulary than the target's), GgufError (missing or malformed
  /// model file, a non-LLaMA architecture), PluginError / PluginCallError (a plugin refused),
  /// std::invalid_argument / std::runtime_error for an `options.chat_template` that is neither a
  /// family name nor a file with a recognised template (an unrecognised template in the model
  /// only leaves chat_template() null).
  /// std::invalid_argument naming `--max-model-len` when options.max_model_len exceeds the model's
  /// context or the KV pool cannot hold ceil(max_model_len / block_size) blocks.
  static std::unique_ptr<EngineHost> load(const Options& options, HostContext& host);
  ~EngineHost();

  Engine& engine() { return *engine_; }
  const Tokenizer& tokenizer() const { return *tokenizer_; }
  /// The chat template (Options::chat_template, else the model's), or nullptr when the model's
  /// metadata has none plinth recognises. BOS / EOS are the model's tokens, and template markers
  /// the vocabulary has no special token for render as text.
  const ChatTemplate* chat_template() const { return chat_.get(); }
  /// Why chat_template() is null ("" when it is not).
  const std::string& chat_template_error() const { return chat_error_; }
  const ModelConfig& config() const { return model_.config; }
  /// Prompt + completion tokens at most per sequence: Options::max_model_len, or the model's
  /// context length when that was 0. The engine's context_length and the server's limits.
  uint32_t max_model_len() const { return max_model_len_; }
  Pipeline& pipeline() { return *pipeline_; }
  /// Compiles structured-output constraints through the manifest's grammar plugin (its
  /// available() is false when the manifest has none). Thread-safe.
  const GrammarCompiler& grammar() const { return *grammar_; }
  /// A short model name for APIs: general.name, else the file stem.
  const std::string& model_name() const { return model_name_; }
  /// The file the model was loaded from.
  const std::filesystem::path& model_path() const { return model_path_; }
  /// The model id the APIs answer with (`model` of every reply, /v1/models, batch output lines)
  /// unless `serve --served-model-name` gives one: the file's stem, as vLLM serves the model
  /// path (no spaces, unlike many general.name).
  std::string default_served_name() const { return model_path_.stem().string(); }
  /// Token ids that end generation by default: EOS and the chat template's end-of-turn tokens.
  const std::vector<int32_t>& stop_token_ids() const { return stop_ids_; }

  /// Plain-text prompt → token ids (BOS when the model asks). Text that looks like a control
  /// token is plain text (a user-defined token's text becomes that token, as in llama.cpp).
  /// Throws InvalidUtf8Error (std::invalid_argument) for invalid UTF-8.
  std::vector<int32_t> encode(std::string_view text) const;
  /// Chat messages → token ids through the chat template, with the assistant generation prompt;
  /// `options` are the request's template variables (Qwen3's enable_thinking). Throws
  /// std::invalid_argument when the model has no recognised template or a role is unknown.
  std::vector<int32_t> encode_chat(const std::vector<ChatMessage>& messages,
                                   const ChatTemplate::RenderOptions& options = {}) const;

 private:
  EngineHost() = default;
  // The steps of load, in order.
  void open_model(const std::filesystem::path& path, const Options& options);
  void load_chat_template(const Options& options, HostContext& host);
  void collect_stop_ids();
  void allocate_kv(const Options& options, HostContext& host);
  void start_grammar(HostContext& host);
  void make_engine();

  LoadedModel model_;
  std::filesystem::path model_path_;
  std::string model_name_;
  uint32_t max_model_len_ = 0;
  std::unique_ptr<Tokenizer> tokenizer_;
  std::unique_ptr<ChatTemplate> chat_;
  std::string chat_error_;
  std::vector<int32_t> stop_ids_;
  std::unique_ptr<Pipeline> pipeline_;
  std::unique_ptr<GrammarCompiler> grammar_;
  std::unique_ptr<Engine> engine_;
};

}  // namespace plinth
