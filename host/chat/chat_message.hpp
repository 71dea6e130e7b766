#pragma once
// One turn of a chat conversation, as the chat templates take it.

#include <optional>
#include <string>

namespace plinth {

/// One turn of a conversation. role: "system" | "user" | "assistant".
struct ChatMessage {
  std::string role;
  std::string content;
  /// An assistant turn's reasoning given apart from its content (the `reasoning_content` of
  /// OpenAI-compatible servers); nullopt = not given. Templates that keep reasoning (Qwen3) use it
  /// instead of splitting a <think> block off `content`; the others ignore it, as their Jinja does.
  std::optional<std::string> reasoning_content = std::nullopt;
};

}  // namespace plinth
