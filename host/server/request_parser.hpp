#pragma once
// Parsing of the OpenAI request bodies of POST /v1/completions and POST /v1/chat/completions
// (https://platform.openai.com/docs/api-reference/completions/create,
//  https://platform.openai.com/docs/api-reference/chat/create) into engine requests.
// Wrong types and missing required fields → ApiError 422; values out of range, a prompt over the
// context, an unknown model → 400 / 404. Unknown fields are ignored, as OpenAI and vLLM do.
// vLLM's extra sampling fields are read from the top level of the body (what the OpenAI client's
// extra_body sends): truncate_prompt_tokens, min_tokens, stop_token_ids,
// include_stop_str_in_output, skip_special_tokens, ignore_eos, top_k, min_p, repetition_penalty.

#include <algorithm>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "chat/chat_template.hpp"
#include "engine/grammar.hpp"
#include "sampling/sampling_params.hpp"
#include "server/tool_request.hpp"

namespace plinth {
class EngineHost;
}

namespace plinth::server {

enum class ApiKind { kCompletion, kChat };

/// One parsed request: its prompts (token ids) and everything needed to answer it.
struct ApiRequest {
  ApiKind kind = ApiKind::kCompletion;
  std::string model;
  /// Prompt token ids, one entry per prompt (completions accept a batch; chat has one).
  std::vector<std::vector<int32_t>> prompts;
  /// Shared by every choice; choice i of a seeded request gets seed + i.
  SamplingParams params;
  int32_t n = 1;  ///< choices per prompt
  /// Completions: candidates generated per prompt (>= n); the n with the highest cumulative
  /// logprob are returned (OpenAI's best_of). Candidate i is seeded like choice i.
  int32_t best_of = 1;
  /// Completions: each choice's text starts with its prompt's text (OpenAI's echo).
  bool echo = false;
  bool stream = false;
  bool include_usage = false;  ///< stream_options.include_usage
  bool logprobs = false;       ///< return the sampled tokens' logprobs
  int32_t top_logprobs = 0;    ///< alternatives per token, 0..20
  int32_t priority = 0;        ///< lower runs first under the scheduler's priority policy
  std::string user;
  std::string cache_salt;  ///< prefix-cache namespace (vLLM's `cache_salt`); "" = shared
  /// plinth extension: false opts this request out of speculative decoding (default true; the
  /// output at temperature 0 is the same either way)
  bool speculative = true;
  /// max_tokens (or max_completion_tokens) was in the body; else params.max_tokens is the default
  /// (16 for completions, the rest of the context for chat).
  bool max_tokens_given = false;
  /// Structured outputs (response_format / structured_outputs): the constraint every choice
  /// follows, compiled by the grammar plugin before the request enters the engine.
  std::optional<GrammarSpec> grammar;
  /// The request field `grammar` came from, named by a refusal of it: "response_format" or
  /// "structured_outputs" (an API translated onto this parser renames it, e.g. "text.format").
  std::string grammar_param;
  /// Chat: tool calling (tools / tool_choice), when the reply may hold tool calls (else null);
  /// `grammar` is then the grammar of the calls in the template's format (tool_call_grammar;
  /// with response_format beside tools under auto, the reply's schema inside it) and
  /// `grammar_param` "tools".
  std::shared_ptr<const ToolRequest> tools;
  /// The token that arms `grammar` (GenerationRequest::grammar_trigger): Mistral Nemo's
  /// [TOOL_CALLS] control token under tool_choice auto (free text until the model samples it,
  /// then the calls). nullopt: the grammar holds from the first token.
  std::optional<int32_t> grammar_trigger;

  /// Choices in the response: prompts.size() × n.
  size_t num_choices() const { return prompts.size() * static_cast<size_t>(n); }
  /// Engine requests generated: prompts.size() × max(n, best_of).
  int32_t candidates_per_prompt() const { return std::max(n, best_of); }
  size_t num_candidates() const {
    return prompts.size() * static_cast<size_t>(candidates_per_prompt());
  }
};

struct ParseLimits {
  int32_t max_n = 16;             ///< n in [1, max_n]
  int32_t max_prompts = 64;       ///< completions: prompts in one request
  std::string served_model_name;  ///< what `model` must name (the model's own name also matches)
};

/// What parsing a request needs of the served model. EngineHost provides it (the overload of
/// parse_request below); the fuzz target and its replay test provide a tokenizer and a chat
/// template without a pipeline (tests/fuzz/).
class RequestModel {
 public:
  virtual ~RequestModel() = default;
  /// Plain-text prompt → token ids; throws std::invalid_argument (invalid UTF-8).
  virtual std::vector<int32_t> encode(std::string_view text) const = 0;
  /// Chat messages → token ids with the generation prompt, `options` the request's template
  /// variables (chat_template_kwargs); throws std::invalid_argument (no template, unknown role).
  virtual std::vector<int32_t> encode_chat(const std::vector<ChatMessage>& messages,
                                           const ChatTemplate::RenderOptions& options) const = 0;
  /// Token ids are valid in [0, vocab_size()).
  virtual int64_t vocab_size() const = 0;
  /// Prompt + completion tokens at most.
  virtual int64_t context_length() const = 0;
  /// The model's own name, accepted as `model` besides ParseLimits::served_model_name.
  virtual const std::string& model_name() const = 0;
  /// Token ids that end generation unless `ignore_eos`.
  virtual const std::vector<int32_t>& stop_token_ids() const = 0;
  /// How the chat template writes tool calls (ChatTemplate::tool_call_syntax); other than kNone,
  /// tools and tool turns are rendered its way, else as the tool-call envelope.
  virtual ToolCallSyntax chat_tool_syntax() const { return ToolCallSyntax::kNone; }
  /// The id of the special token (control or user-defined) whose text is exactly `text`;
  /// nullopt when the vocabulary has none (the marker is then plain text).
  virtual std::optional<int32_t> special_token(std::string_view text) const {
    (void)text;
    return std::nullopt;
  }
  /// Whether the chat template defines tool calling.
  bool chat_supports_tools() const { return chat_tool_syntax() != ToolCallSyntax::kNone; }
};

/// Parses a request body. Throws ApiError (400 malformed JSON, 422 wrong type / missing field,
/// 400 out of range or too long, 404 unknown model).
ApiRequest parse_request(ApiKind kind, std::string_view body, const RequestModel& model,
                         const ParseLimits& limits);

/// The same over the model `host` serves (request_parser_host.cpp).
ApiRequest parse_request(ApiKind kind, std::string_view body, const EngineHost& host,
                         const ParseLimits& limits);

}  // namespace plinth::server
