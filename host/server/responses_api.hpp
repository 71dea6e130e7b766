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
// are what needs constrained decoding (`tools`, `text.format` json_schema / json_object) and
// image / file / tool-call input items. Errors in OpenAI's shape.

#include <cstdint>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "server/anthropic_api.hpp"  // PreparedGeneration
#include "server/generation_response.hpp"

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
  ResponsesResponse(std::string id, std::string model, bool stream, uint32_t input_tokens,
                    const nlohmann::json& request);

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

  std::string id_, item_id_, model_;
  bool stream_;
  int64_t created_at_;
  uint32_t input_tokens_, output_tokens_ = 0;
  nlohmann::json echo_;  // the request fields the object repeats
  std::string text_;
  bool started_ = false, finished_ = false;
  std::string finish_reason_;
  std::string error_, error_param_;
  int error_status_ = 500;
  mutable int64_t sequence_number_ = 0;
};

}  // namespace plinth::server::responses
