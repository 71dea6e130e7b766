#pragma once
// Tool calling in OpenAI's chat request
// (https://platform.openai.com/docs/api-reference/chat/create):
//   tools: [{"type": "function", "function": {"name", "description", "parameters", "strict"}}]
//   tool_choice: "none" | "auto" | "required" | {"type": "function", "function": {"name": ...}}
//   parallel_tool_calls: bool (default true)
// read into a ToolRequest, each error an ApiError naming the field (422 wrong type or missing
// member, 400 bad value: an invalid name, duplicate names, parameters that are not an object
// schema, tool_choice without tools or naming an unknown function).

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "chat/chat_message.hpp"

namespace plinth::server {

/// One function the model may call.
// NOLINTNEXTLINE(bugprone-exception-escape): ordered_json's noexcept move calls ordered_map's.
struct ToolFunction {
  std::string name;         ///< ^[A-Za-z0-9_-]{1,64}$, as OpenAI requires
  std::string description;  ///< "" when absent
  /// The arguments' JSON Schema, members in the request's order (the order the output follows);
  /// absent parameters = {"type": "object", "properties": {}} (a function without arguments).
  nlohmann::ordered_json parameters;
  bool strict = false;  ///< absent additionalProperties = false in `parameters` (OpenAI's strict)
  /// The tool object as the request gave it (members in order), for templates that render tools.
  nlohmann::ordered_json source;
};

enum class ToolChoice { kNone, kAuto, kRequired, kNamed };

/// How the model writes its calls: the JSON envelope the grammar forces (templates without
/// tools, tool_envelope.hpp), or its template's own format (Hermes: Qwen2.5's <tool_call>;
/// Llama 3.x: the reply is {"name": ..., "parameters": {...}}; Mistral Nemo: "[TOOL_CALLS]"
/// (written into the prompt) then [{"name": ..., "arguments": {...}, "id": "<9>"}, ...]).
enum class ToolFormat { kEnvelope, kHermes, kLlama3Json, kMistralNemo };

/// What a request asks of tool calling.
// NOLINTNEXTLINE(bugprone-exception-escape): ordered_json's noexcept move calls ordered_map's.
struct ToolRequest {
  std::vector<ToolFunction> tools;
  ToolChoice choice = ToolChoice::kNone;
  std::string named;     ///< kNamed: the function that must be called
  bool parallel = true;  ///< parallel_tool_calls: more than one call in a reply
  ToolFormat format = ToolFormat::kEnvelope;  ///< set by the parser from the chat template
  /// response_format beside tools under tool_choice auto: the JSON Schema a reply that calls no
  /// tool follows (json_object: {"type": "object"}; strict already applied); null = free text.
  /// Set by the request parser.
  nlohmann::ordered_json response_schema;
  /// Whether the reply may hold tool calls (tools given and tool_choice not none).
  bool calls_possible() const { return !tools.empty() && choice != ToolChoice::kNone; }
  /// The function called `name`, or null.
  const ToolFunction* find(std::string_view name) const;
};

/// JSON levels a tool (its parameters schema included), a history call's arguments or an output
/// constraint's schema (response_format, structured_outputs.json) may nest:
/// the code that walks and writes them recurses (the grammar plugin refuses schemas nested
/// deeper than 64 schema levels anyway).
inline constexpr size_t kMaxToolNesting = 160;

/// The nesting of `v` (1 for a scalar), counted without recursion, and no further than one past
/// kMaxToolNesting + 1.
size_t json_nesting(const nlohmann::json& v);
size_t json_nesting(const nlohmann::ordered_json& v);

/// Reads tools / tool_choice / parallel_tool_calls of a chat body. `raw` is the body's text (the
/// parameter schemas are taken from it with their members in order). nullopt when the body has
/// no tools and no tool_choice (or tool_choice "none" without tools). Throws ApiError.
std::optional<ToolRequest> parse_tool_request(const nlohmann::json& body, std::string_view raw);

/// Reads the tool members of messages[i] (`m`, named `where`) into `msg`: an assistant turn's
/// tool_calls ([{"id", "type": "function", "function": {"name", "arguments": JSON text}}]), a
/// tool turn's tool_call_id (required). Throws ApiError (422 wrong type / missing member, 400
/// arguments that are not JSON text).
void parse_message_tools(const nlohmann::json& m, const std::string& where, ChatMessage& msg);

/// A call id as Mistral Nemo's template takes it (9 characters, letters and digits): `id` itself
/// when it is one, else 9 letters and digits derived from it (FNV-1a), the same for the same id,
/// so that an assistant call and the tool turn answering it keep matching.
std::string mistral_call_id(const std::string& id);

/// Checks that each tool turn answers a call of an earlier assistant turn (OpenAI's rule). Throws
/// ApiError 400 naming messages[i].tool_call_id.
void check_tool_history(const std::vector<ChatMessage>& messages);

}  // namespace plinth::server
