#pragma once
// One turn of a chat conversation, as the chat templates take it.

#include <optional>
#include <string>
#include <vector>

namespace plinth {

/// How a chat template's family writes tool calls (ChatTemplate::tool_call_syntax).
enum class ToolCallSyntax {
  kNone,        ///< the template defines no tool calling
  kHermes,      ///< Qwen2.5: "<tool_call>\n{\"name\": ..., \"arguments\": {...}}\n</tool_call>"
  kLlama3Json,  ///< Llama 3.1 / 3.2 / 3.3: the reply is {"name": ..., "parameters": {...}}
  /// Mistral Nemo: "[TOOL_CALLS][{\"name\": ..., \"arguments\": {...}, \"id\": \"<9>\"}]"
  kMistralNemo,
};

/// A tool call an assistant turn made (OpenAI's message.tool_calls[j]).
struct ChatToolCall {
  std::string id;         ///< "call_..." ("" when the client gave none)
  std::string name;       ///< the function called
  std::string arguments;  ///< its arguments as JSON text, as the client gave them
};

/// One turn of a conversation. role: "system" | "user" | "assistant" ("tool" where the server
/// renders tool results; chat templates without tools take the three).
struct ChatMessage {
  std::string role;
  std::string content;
  /// An assistant turn's reasoning given apart from its content (the `reasoning_content` of
  /// OpenAI-compatible servers); nullopt = not given. Templates that keep reasoning (Qwen3) use it
  /// instead of splitting a <think> block off `content`; the others ignore it, as their Jinja does.
  std::optional<std::string> reasoning_content = std::nullopt;
  /// An assistant turn's tool calls (empty: none).
  std::vector<ChatToolCall> tool_calls = {};
  /// A "tool" turn: the id of the call whose result `content` is.
  std::string tool_call_id = {};
};

}  // namespace plinth
