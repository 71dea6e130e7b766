#pragma once
// The OpenAI response bodies of one request: the JSON object of a non-streamed answer, or the
// server-sent-event frames of a streamed one ("data: {chunk}\n\n" ... "data: [DONE]\n\n"), built
// from the engine's StreamEvents of each choice.
//   completions: object "text_completion", choices[i].text, logprobs {tokens, token_logprobs,
//                top_logprobs, text_offset}
//   chat:        object "chat.completion" / "chat.completion.chunk", choices[i].message / .delta,
//                logprobs {content: [{token, logprob, bytes, top_logprobs}]}
// Choice index = prompt index × n + sample index, as OpenAI numbers them.

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "server/async_engine.hpp"
#include "server/request_parser.hpp"

namespace plinth::server {

/// JSON text with invalid UTF-8 (a token that is part of a character) replaced by U+FFFD.
std::string dump_json(const nlohmann::json& j);
/// One SSE frame: "data: <payload>\n\n".
std::string sse_frame(const std::string& payload);

class ResponseBuilder {
 public:
  /// `id`: "cmpl-..." / "chatcmpl-..."; `created`: Unix seconds.
  ResponseBuilder(const ApiRequest& request, std::string id, int64_t created);

  /// Records an event of choice `index`. Streaming: returns the SSE frames to send now (may be
  /// empty). Not streaming: returns "".
  std::string on_event(size_t index, const StreamEvent& event);
  bool stream() const { return stream_; }
  /// Every choice finished.
  bool done() const { return num_finished_ == choices_.size(); }
  /// Some choice failed inside the engine; its message.
  const std::string& error() const { return error_; }
  /// HTTP status of error(): 400 for a request the engine refused, else 500.
  int error_status() const { return error_status_; }
  /// The non-streamed body (once done()).
  std::string body() const;
  /// The closing SSE frames: the usage chunk when asked, then "data: [DONE]".
  std::string stream_end() const;

 private:
  struct Choice {
    std::string text;
    std::vector<TokenLogprob> logprobs;
    std::string finish_reason;
    uint32_t completion_tokens = 0;
    bool finished = false;
    bool role_sent = false;
  };
  nlohmann::json usage() const;
  nlohmann::json logprobs_json(const Choice& choice, size_t from, size_t text_offset) const;
  nlohmann::json chunk_base() const;

  ApiKind kind_;
  bool stream_, include_usage_, logprobs_;
  std::string id_, model_;
  int64_t created_;
  std::vector<Choice> choices_;
  uint32_t prompt_tokens_ = 0;
  size_t num_finished_ = 0;
  std::string error_;
  int error_status_ = 500;
};

}  // namespace plinth::server
