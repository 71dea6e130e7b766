#pragma once
// The OpenAI response bodies of one request: the JSON object of a non-streamed answer, or the
// server-sent-event frames of a streamed one ("data: {chunk}\n\n" ... "data: [DONE]\n\n"), built
// from the engine's StreamEvents of each choice.
//   completions: object "text_completion", choices[i].text, logprobs {tokens, token_logprobs,
//                top_logprobs, text_offset}
//   chat:        object "chat.completion" / "chat.completion.chunk", choices[i].message / .delta,
//                logprobs {content: [{token, logprob, bytes, top_logprobs}]}
// Choice index = prompt index × n + sample index, as OpenAI numbers them.
//
// Logprobs describe exactly the returned text, streamed or not: a token's entry is returned when it
// starts inside the text (an end-of-turn token or a stop string cut from the text has none);
// streamed entries wait until the text they start in has been sent. text_offset counts characters
// (Unicode code points) from the start of the choice's text, echoed prompt included.
// best_of: the engine events are per candidate (prompt index × best_of + candidate); the body
// returns, per prompt, the n candidates with the highest cumulative logprob (every sampled token
// counted, as vLLM), best first.
// Tool calling (request.tools): each chat choice's text goes through a ToolCallParser; the body's
// message holds tool_calls ({"id": "call_...", "type": "function", "function": {"name",
// "arguments"}}) and content (null when the reply is calls only), finish_reason "tool_calls" when
// a reply that ended by itself holds calls; a stream sends delta.tool_calls (index, id, type and
// name once per call, then argument fragments) and delta.content for text.

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "server/async_engine.hpp"
#include "server/generation_response.hpp"
#include "server/request_parser.hpp"
#include "server/tool_call_parser.hpp"

namespace plinth::server {

/// JSON text with invalid UTF-8 (a token that is part of a character) replaced by U+FFFD.
std::string dump_json(const nlohmann::json& j);
/// One SSE frame: "data: <payload>\n\n".
std::string sse_frame(const std::string& payload);
/// How logprobs name a token whose bytes (`text`, as decoded) are not whole UTF-8 characters (a
/// byte-level token, part of a character): "bytes:" and each byte as \xNN, lowercase hex, as
/// OpenAI's and vLLM's (`bytes:\xe4\xb8`); any other token is its text. So two such tokens never
/// share a name (completions' top_logprobs keys stay distinct) and no name needs U+FFFD.
std::string logprob_token(const std::string& text);

class ResponseBuilder final : public GenerationResponse {
 public:
  /// `id`: "cmpl-..." / "chatcmpl-..."; `created`: Unix seconds.
  /// `echo_texts`: with request.echo, each prompt's text (one per prompt), put before its choices'
  /// text; else empty.
  ResponseBuilder(const ApiRequest& request, std::string id, int64_t created,
                  std::vector<std::string> echo_texts = {});

  /// Records an event of candidate `index` (= choice index unless best_of > n). Streaming: returns
  /// the SSE frames to send now (may be empty). Not streaming: returns "".
  std::string on_event(size_t index, const StreamEvent& event) override;
  bool stream() const override { return stream_; }
  /// Every choice finished.
  bool done() const override { return num_finished_ == choices_.size(); }
  /// Some choice failed inside the engine; its message.
  const std::string& error() const override { return error_; }
  /// HTTP status of error(): 400 for a request the engine refused, else 500.
  int error_status() const override { return error_status_; }
  /// The request field error() names (StreamEvent::error_param), "" when none.
  const std::string& error_param() const override { return error_param_; }
  /// The non-streamed body (once done()).
  std::string body() const override;
  /// The closing SSE frames: the usage chunk when asked, then "data: [DONE]".
  std::string stream_end() const override;

 private:
  struct Choice {
    std::string text;  ///< generated text (without the echoed prompt)
    std::vector<TokenLogprob> logprobs;
    size_t lp_sent = 0;             ///< streamed entries so far
    double cumulative_logprob = 0;  ///< every sampled token's logprob
    bool echo_sent = false;
    std::string finish_reason;
    uint32_t completion_tokens = 0;
    bool finished = false;
    bool role_sent = false;
    std::unique_ptr<ToolCallParser> tool_parser;  ///< tool calling: the reply's parser
    ToolCallResult tool_result;                   ///< what it has read so far
    std::vector<std::string> call_ids;            ///< "call_..." per call
  };
  /// Tool calling: the delta (or message) members of the events of choice `c`; ids assigned.
  nlohmann::json tool_delta(Choice& c, const std::vector<ToolEvent>& events);
  /// Tool calling: feeds the event's text to `c`'s parser; the delta members of what it read.
  nlohmann::json feed_tools(Choice& c, const StreamEvent& ev);
  /// Records the end of choice `c` (its finish_reason; the first error).
  void finish_choice(Choice& c, const StreamEvent& ev);
  /// Stream: the error frame of a failed choice and the role chunk before its first delta.
  std::string leading_frames(size_t index, Choice& c, const StreamEvent& ev);
  /// Tool calling: the body's message of choice `c`.
  static nlohmann::json tool_message(const Choice& c);
  /// Tool calling: finish_reason "tool_calls" for a reply with calls that stopped by itself.
  static std::string tool_finish_reason(const Choice& c);
  nlohmann::json usage() const;
  /// Entries [from, to) of `choice`, text offsets counted after `echo_chars` characters.
  nlohmann::json logprobs_json(const Choice& choice, size_t from, size_t to,
                               size_t echo_chars) const;
  /// Entries of `choice` that start inside its text so far.
  static size_t num_visible(const Choice& choice);
  const std::string& echo_of(size_t index) const;
  nlohmann::json chunk_base() const;

  ApiKind kind_;
  bool stream_, include_usage_, logprobs_;
  std::string id_, model_;
  int64_t created_;
  std::vector<Choice> choices_;    // one per candidate
  size_t n_ = 1, per_prompt_ = 1;  // choices and candidates per prompt
  std::vector<std::string> echo_;
  uint32_t prompt_tokens_ = 0;
  size_t num_finished_ = 0;
  bool tools_ = false;           // the reply may hold tool calls
  bool content_forced_ = false;  // tool_choice required / named: the reply is calls only
  std::string error_;
  int error_status_ = 500;
  std::string error_param_;
};

}  // namespace plinth::server
