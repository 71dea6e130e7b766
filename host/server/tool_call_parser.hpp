#pragma once
// Reads tool calls out of a reply while it streams: the generated text goes in piece by piece
// (any split, down to single bytes) and comes out as events — text for the user (content), a
// call's start (its index and function name), fragments of its arguments. The arguments of a
// call are its JSON value as generated with the whitespace outside strings dropped, so the
// fragments of a stream concatenate to exactly the arguments of the whole reply.
//
// EnvelopeParser reads the JSON envelope of tool_envelope.hpp:
//   {"tool_calls": [{"name": ..., "arguments": {...}}, ...]}  or  {"response": "..."}
// (the response string decoded into content). The grammar plugin keeps the reply to that shape;
// a reply cut short (max_tokens, a stop string) yields what it holds so far. make_hermes_parser
// reads the <tool_call> blocks of Qwen2.5's template after free text, make_llama3_parser Llama
// 3.x's {"name", "parameters"} call after free text, make_mistral_nemo_parser Mistral Nemo's
// list of calls.

#include <cstddef>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace plinth::server {

struct ToolRequest;

/// One event of a reply being parsed.
struct ToolEvent {
  enum class Kind { kContent, kCallStart, kArguments };
  Kind kind = Kind::kContent;
  size_t index = 0;  ///< the call (kCallStart, kArguments)
  std::string text;  ///< the content, the function name, or an arguments fragment
};

/// A reply's tool calls and content, accumulated from its events.
struct ToolCallResult {
  struct Call {
    std::string name;
    std::string arguments;
  };
  std::string content;
  bool has_content = false;  ///< some content was produced (an empty response string counts)
  std::vector<Call> calls;
  void apply(const ToolEvent& e);
};

/// Parses one reply. Not thread-safe; one per choice.
class ToolCallParser {
 public:
  virtual ~ToolCallParser() = default;
  /// Appends events for `text`, the next piece of the reply.
  virtual void feed(std::string_view text, std::vector<ToolEvent>& out) = 0;
  /// The reply has ended: appends what was held back (text that might have begun a call marker).
  virtual void finish(std::vector<ToolEvent>& out) { (void)out; }
  /// The request's grammar trigger token was sampled here (StreamEvent::trigger_offset): the
  /// text fed from now on is the grammar's. A token-level signal: text that merely looks like
  /// the marker never calls this. Ignored by the formats whose calls start with text.
  virtual void trigger(std::vector<ToolEvent>& out) { (void)out; }
};

/// The parser of the JSON envelope (tool_envelope.hpp). json_response: the "response" member's
/// value is content as its JSON text (response_format beside tools), else a string decoded into
/// content (a value of another type: its JSON text).
std::unique_ptr<ToolCallParser> make_envelope_parser(bool json_response = false);

/// The parser of Hermes-style calls (Qwen2.5's template): free text, then calls as
/// "<tool_call>\n{\"name\": ..., \"arguments\": {...}}\n</tool_call>"; text before the first
/// call is content, whitespace between and after calls is dropped.
std::unique_ptr<ToolCallParser> make_hermes_parser();

/// The parser of Llama 3.x's calls: free text, then a call written as
/// "{\"name\": \"...\", \"parameters\": {...}}" (its "parameters" are the call's arguments),
/// starting where "{\"name\": \"" does (the grammar's trigger); text before the call is content,
/// whitespace after it dropped.
std::unique_ptr<ToolCallParser> make_llama3_parser();

/// The parser of Mistral Nemo's calls: the JSON list [{"name": ..., "arguments": {...}, "id":
/// ...}, ...] (the ids are not reported) after the "[TOOL_CALLS]" the prompt ends with; with
/// `triggered` (tool_choice auto) free text (content) until ToolCallParser::trigger, the
/// [TOOL_CALLS] control token sampled, then the list.
std::unique_ptr<ToolCallParser> make_mistral_nemo_parser(bool triggered = false);

/// The parser of `r`'s calls in r.format (envelope: json_response when r.response_schema is set).
std::unique_ptr<ToolCallParser> make_tool_call_parser(const ToolRequest& r);

/// A call id: `prefix` ("call_", Anthropic's "toolu_") and 24 random letters and digits.
std::string random_tool_id(std::string_view prefix);

/// Feeds one step's `text` to `parser`: with `trigger_offset` (the grammar trigger was sampled,
/// StreamEvent::trigger_offset) the text before it, ToolCallParser::trigger, the rest; then
/// finish() when `finished`.
void feed_reply(ToolCallParser& parser, std::string_view text, std::optional<size_t> trigger_offset,
                bool finished, std::vector<ToolEvent>& out);

/// Parses a whole reply at once (tests, non-streamed answers).
ToolCallResult parse_tool_reply(ToolCallParser& parser, std::string_view text);

}  // namespace plinth::server
