#pragma once
// The OpenAI Responses API, stateless subset (https://platform.openai.com/docs/api-reference/
// responses/create), on the engine path of POST /v1/chat/completions (internal to host/server/):
//   POST /v1/responses  {model, input (a string or message items), instructions,
//                        max_output_tokens, temperature, top_p, stream, metadata, user}
//                       → a "response" object, or the Responses event stream (response.created,
//                         response.in_progress, response.output_item.added,
//                         response.content_part.added, response.output_text.delta ...,
//                         response.output_text.done, response.content_part.done,
//                         response.output_item.done, response.completed / response.incomplete,
//                         each with its sequence_number)
// The request is checked here, naming the Responses field at fault, and translated into a chat
// completions body that parse_request reads. Nothing is stored: `store: true`,
// `previous_response_id`, `conversation` and `background` are refused with 400 naming them, as
// are built-in tools and image / file input items. Function tools (`tools`, `tool_choice`,
// `parallel_tool_calls`; function_call and function_call_output input items) go onto chat's tool
// calling. Errors in OpenAI's shape.

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "server/anthropic_api.hpp"  // PreparedGeneration
#include "server/generation_response.hpp"
#include "server/tool_call_parser.hpp"

namespace plinth {
class EngineHost;
}

namespace plinth::server::responses {

/// Checks and translates a Responses body (a parsed JSON object) into the equivalent
/// POST /v1/chat/completions body (instructions as the system message, max_output_tokens as
/// max_tokens). Throws ApiError 400 naming the field.
nlohmann::json translate(const nlohmann::json& body);

/// POST /v1/responses: parses `body` and builds its response writer; `id` is the response id
/// ("resp_..."). Errors of the chat parser are renamed to the Responses fields (messages → input,
/// max_tokens → max_output_tokens). Throws ApiError.
PreparedGeneration prepare(std::string_view body, const EngineHost& host, const ParseLimits& limits,
                           std::string id);

/// The "response" object and the Responses event stream of one request (one output message with
/// one output_text part). Status "completed", or "incomplete" with
/// incomplete_details.reason "max_output_tokens" when the length limit ended it.
class ResponsesResponse final : public GenerationResponse {
 public:
  /// `request`: the Responses body as received (its instructions, max_output_tokens,
  /// temperature, top_p, metadata and user are echoed in the response object).
  /// `tools`: the request's tool calling (null: none). The output is then read by a
  /// ToolCallParser into items: a message item per text run, a function_call item per call
  /// ({"type": "function_call", "id": "fc_...", "call_id": "call_...", "name", "arguments",
  /// "status"}); streamed, a call is response.output_item.added, then
  /// response.function_call_arguments.delta fragments, .done and response.output_item.done.
  ResponsesResponse(std::string id, std::string model, bool stream, uint32_t input_tokens,
                    const nlohmann::json& request,
                    std::shared_ptr<const ToolRequest> tools = nullptr);

  std::string on_event(size_t index, const StreamEvent& event) override;
  bool stream() const override { return stream_; }
  bool done() const override { return finished_; }
  const std::string& error() const override { return error_; }
  int error_status() const override { return error_status_; }
  const std::string& error_param() const override { return error_param_; }
  std::string body() const override;
  std::string stream_end() const override;

 private:
  /// The response object in its current state ("in_progress" until finished).
  nlohmann::json object(bool final) const;
  nlohmann::json message_item(bool final) const;
  nlohmann::json text_part() const;
  /// One named event with the next sequence_number.
  std::string event(const std::string& type, nlohmann::json data) const;

  /// Tool mode: an output item (a message item's text is tool_texts_[text]).
  struct Item {
    bool call = false;
    std::string id;       // "msg_..." / "fc_..."
    std::string call_id;  // function_call: "call_..."
    size_t index = 0;     // function_call: the call; message: its text run
  };
  nlohmann::json item_json(const Item& item, bool final) const;
  /// Tool mode: the events' items and stream events (empty when not streaming).
  std::string tool_events(const std::vector<ToolEvent>& events);
  /// Tool mode: the done events of the open item.
  std::string close_item() const;

  std::string id_, item_id_, model_;
  bool stream_;
  int64_t created_at_;
  uint32_t input_tokens_, output_tokens_ = 0;
  nlohmann::json echo_;  // the request fields the object repeats
  std::string text_;
  bool started_ = false, finished_ = false;
  std::string finish_reason_;
  /// Cut short: by max_output_tokens ("length"), or aborted by the server ("abort": a drain's
  /// timeout): status "incomplete", ending with response.incomplete.
  bool incomplete() const { return finish_reason_ == "length" || finish_reason_ == "abort"; }
  std::string error_, error_param_;
  int error_status_ = 500;
  mutable int64_t sequence_number_ = 0;
  std::shared_ptr<const ToolRequest> tools_;
  std::unique_ptr<ToolCallParser> tool_parser_;  // tool mode (null: one message item)
  ToolCallResult tool_result_;
  std::vector<std::string> tool_texts_;  // tool mode: each message item's text
  std::vector<Item> items_;
  bool item_open_ = false;  // the last of items_ is still being written
};

}  // namespace plinth::server::responses
