#pragma once
// The Anthropic Messages API (https://docs.anthropic.com/en/api/messages) on the engine path of
// POST /v1/chat/completions (internal to host/server/):
//   POST /v1/messages               {model, max_tokens, messages, system, stop_sequences,
//                                    temperature, top_p, top_k, metadata, stream}
//                                   → a "message" object, or Anthropic's named SSE events
//   POST /v1/messages/count_tokens  {model, messages, system} → {"input_tokens": N}
// The request is checked here, naming the Anthropic field at fault, and translated into the chat
// completions body that parse_request reads (so the chat template, sampling, prefix cache and
// speculation are those of /v1/chat/completions). Tool use (`tools`, `tool_choice`, tool_use /
// tool_result blocks) goes onto chat's tool calling (anthropic_tools.hpp). Not supported, refused
// with 400 naming them: image and document blocks, server tools, thinking blocks, `thinking`
// enabled, a final assistant message (prefill).
// Errors in Anthropic's shape: {"type": "error", "error": {"type": ..., "message": ...}}.

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "chat/chat_message.hpp"
#include "server/generation_response.hpp"
#include "server/request_parser.hpp"
#include "server/tool_call_parser.hpp"

namespace plinth {
class EngineHost;
}

namespace plinth::server {

/// A generation request of one of the non-OpenAI-chat APIs, ready to submit: the parsed request
/// and the object that writes its answer.
struct PreparedGeneration {
  ApiRequest api;
  std::unique_ptr<GenerationResponse> response;
  /// The request field that bounds the output length, named in the hint of an engine refusal
  /// when the request left it to its default ("" when the API requires it).
  std::string max_tokens_field;
};

namespace anthropic {

/// A Messages API body, checked and translated.
struct Translated {
  /// The equivalent POST /v1/chat/completions body (system first; stop_sequences as stop,
  /// metadata.user_id as user; plinth's own cache_salt, speculative and seed passed through).
  nlohmann::json chat_body;
  /// The conversation as the chat template takes it (system first).
  std::vector<ChatMessage> messages;
};

/// Checks and translates `body` (a parsed JSON object). `count_only`: the count_tokens body, which
/// has no max_tokens and whose sampling fields are not read. Throws ApiError 400 naming the field.
Translated translate(const nlohmann::json& body, bool count_only);

/// POST /v1/messages: parses `body` and builds its response writer. `id`: the message id
/// ("msg_..."). Throws ApiError (400, 404 for an unknown model).
PreparedGeneration prepare_messages(std::string_view body, const EngineHost& host,
                                    const ParseLimits& limits, std::string id);

/// POST /v1/messages/count_tokens: the response body {"input_tokens": N}, N = the prompt tokens a
/// /v1/messages request with these messages would have. Throws ApiError.
std::string count_tokens_response(std::string_view body, const EngineHost& host,
                                  const ParseLimits& limits);

/// Anthropic's error body for an OpenAI-shaped one (ApiError::body()): the message kept, the type
/// from the HTTP status (400 / 422 invalid_request_error, 401 authentication_error, 403
/// permission_error, 404 not_found_error, 413 request_too_large, 429 rate_limit_error, 503
/// overloaded_error, another 4xx invalid_request_error, another 5xx api_error).
std::string error_body(unsigned status, const std::string& openai_body);

/// The "message" object / Anthropic SSE events of one request (n = 1). Stream: message_start,
/// content_block_start and ping with the first event, content_block_delta (text_delta) per text
/// delta, and at the end content_block_stop, message_delta (stop_reason, stop_sequence, usage)
/// and message_stop; an engine failure is an `error` event.
class MessagesResponse final : public GenerationResponse {
 public:
  /// `stop`: the request's stop_sequences, in order (the engine reports the matched one's index).
  /// `tools`: the request's tool calling (null: none); the reply is then read by a
  /// ToolCallParser into text and tool_use blocks ({"type": "tool_use", "id": "toolu_...",
  /// "name", "input"}), stop_reason "tool_use" when it holds calls and ended by itself; streamed
  /// as a content block per text run or call (tool_use blocks: content_block_start with the id
  /// and name, then input_json_delta fragments of the input's JSON).
  MessagesResponse(std::string id, std::string model, bool stream, uint32_t input_tokens,
                   std::vector<std::string> stop,
                   const std::shared_ptr<const ToolRequest>& tools = nullptr);

  std::string on_event(size_t index, const StreamEvent& event) override;
  bool stream() const override { return stream_; }
  bool done() const override { return finished_; }
  const std::string& error() const override { return error_; }
  int error_status() const override { return error_status_; }
  const std::string& error_param() const override { return error_param_; }
  std::string body() const override;
  std::string stream_end() const override;

 private:
  nlohmann::json usage() const;
  nlohmann::json stop_reason() const;
  nlohmann::json stop_sequence() const;
  /// Tool mode: the SSE events of `events` (blocks opened and closed as text and calls come).
  std::string tool_events(const std::vector<ToolEvent>& events);
  /// Tool mode: closes the open block; its content_block_stop event ("" when none is open).
  std::string close_block();
  nlohmann::json tool_content() const;

  std::string id_, model_;
  bool stream_;
  uint32_t input_tokens_, output_tokens_ = 0;
  std::vector<std::string> stop_;
  std::string text_;
  bool started_ = false, finished_ = false;
  std::string finish_reason_;
  int32_t stop_index_ = -1;
  std::string error_, error_param_;
  int error_status_ = 500;
  std::unique_ptr<ToolCallParser> tool_parser_;  // tool mode (null: plain text)
  ToolCallResult tool_result_;
  std::vector<std::string> tool_ids_;  // "toolu_..." per call
  int open_block_ = -1;                // tool mode: the index of the open content block
  bool open_is_text_ = false;
  int next_block_ = 0;
};

}  // namespace anthropic
}  // namespace plinth::server
