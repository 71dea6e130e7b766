#pragma once
// Tool use in the Anthropic Messages API (https://docs.anthropic.com/en/docs/build-with-claude/
// tool-use), translated onto chat completions' tool calling (internal to host/server/):
//   tools: [{"name", "description", "input_schema"}]  → tools: [{"type": "function", "function":
//          {"name", "description", "parameters"}}] (client tools only; built-in tool types are
//          refused naming tools[i].type)
//   tool_choice: {"type": "auto" | "any" | "tool" (+ "name") | "none",
//                 "disable_parallel_tool_use"} → tool_choice auto / required / a named function /
//                 none, parallel_tool_calls
//   an assistant turn's tool_use blocks {id, name, input} → its tool_calls
//   a user turn's tool_result blocks {tool_use_id, content, is_error} → tool messages (before the
//          turn's text, which stays a user message)

#include <functional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "chat/chat_message.hpp"
#include "server/api_error.hpp"

namespace plinth::server::anthropic {

/// Copies `body`'s tools / tool_choice into `chat` in chat completions' shape. Throws ApiError
/// 400 naming the Anthropic field.
void translate_tools(const nlohmann::json& body, nlohmann::json& chat);

/// The text of a content block other than tool_use / tool_result (`at` names it); throws
/// ApiError for the blocks the server refuses.
using BlockText = std::function<std::string(const nlohmann::json&, const std::string&)>;

/// Appends the chat messages of one Messages API turn (`role` "user" or "assistant", its
/// `content` an array of content blocks, `at` naming it: "messages[2].content"): tool results
/// first, as tool messages, then the turn with its text (`block_text` of each other block) and
/// tool calls. Throws ApiError 400 naming the block (a tool_use outside an assistant turn, a
/// tool_result outside a user turn, what block_text refuses).
void translate_turn(const std::string& role, const nlohmann::json& content, const std::string& at,
                    const BlockText& block_text, std::vector<ChatMessage>& out);

/// `m` as a chat completions message ({"role", "content"}, tool_calls, tool_call_id).
nlohmann::json chat_message_json(const ChatMessage& m);

/// Whether the body uses tool use (tools, tool_choice, or tool blocks in its messages).
bool uses_tools(const std::vector<ChatMessage>& conversation, const nlohmann::json& body);

/// The chat parser's error with the field named as the Messages API names it
/// (tools[i].function.parameters → tools[i].input_schema, tools[i].function.name →
/// tools[i].name, tool_choice.function.name → tool_choice.name, parallel_tool_calls →
/// tool_choice.disable_parallel_tool_use).
ApiError renamed(const ApiError& e);

}  // namespace plinth::server::anthropic
