#pragma once
// One turn of a chat conversation, as the chat templates take it.

#include <string>

namespace plinth {

/// One turn of a conversation. role: "system" | "user" | "assistant".
struct ChatMessage {
  std::string role;
  std::string content;
};

}  // namespace plinth
