// ChatML (SmolLM2, Qwen, OpenHermes, ...): "<|im_start|>{role}\n{content}<|im_end|>\n" per message,
// generation prompt "<|im_start|>assistant\n". Template: teknium/OpenHermes-2.5-Mistral-7B.
#include <optional>
#include <string>
#include <string_view>

#include "chat/chat_template.hpp"
#include "chat/templates/family.hpp"

namespace plinth::chat {
namespace {

constexpr std::string_view kStart = "<|im_start|>";
constexpr std::string_view kEnd = "<|im_end|>";

class ChatMl final : public Family {
 public:
  std::string_view name() const override { return "chatml"; }
  std::string_view description() const override {
    return "ChatML (<|im_start|>role ... <|im_end|>; SmolLM2, Qwen, OpenHermes)";
  }
  bool recognises(std::string_view t) const override {
    // Phi-4's "<|im_start|>system<|im_sep|>" is another format; Qwen2.5 and Qwen3 are families of
    // their own (qwen.cpp); a template that handles <think> blocks (QwQ, DeepSeek-R1 distills)
    // renders history differently from plain ChatML.
    return has(t, kStart) && has(t, kEnd) && !has(t, "<|im_sep|>") && !has(t, "<think>") &&
           !qwen2_5_family().recognises(t) && !qwen3_family().recognises(t);
  }
  SpecialTexts default_special_texts() const override { return {"", std::string(kEnd), "", {}}; }
  std::vector<std::string> markers() const override {
    return {std::string(kStart), std::string(kEnd)};
  }
  void render(const Conversation& conv, bool gen, const SpecialTexts&, Prompt& out) const override {
    for (const ChatMessage& m : conv.messages) {
      out.marker(kStart);
      out.text(m.role + "\n" + m.content);
      out.marker(kEnd);
      out.text("\n");
    }
    if (gen) {
      out.marker(kStart);
      out.text("assistant\n");
    }
  }
  std::vector<std::string> stop_texts(const SpecialTexts&) const override {
    return {std::string(kEnd)};
  }
};

}  // namespace

const Family& chatml_family() {
  static const ChatMl f;
  return f;
}

}  // namespace plinth::chat

namespace plinth {
namespace {

// Where the content of a system turn opening at `at` ("<|im_start|>system" of `head_size`
// chars) begins: past the newline, written as a real one or as the two characters "\n";
// npos when neither follows.
size_t system_content_start(const std::string& t, size_t at, size_t head_size) {
  const size_t i = at + head_size;
  if (t.compare(i, 1, "\n") == 0) return i + 1;
  if (t.compare(i, 2, "\\n") == 0) return i + 2;
  return std::string::npos;
}

char unescape(char e) {
  return e == 'n' ? '\n' : e == 't' ? '\t' : e == 'r' ? '\r' : e;
}

// The rest of the string literal from `i` up to <|im_end|>, escapes decoded; nullopt when a
// closing quote (the content is an expression, e.g. messages[0]['content'], not a default) or
// the end of the text comes first.
std::optional<std::string> literal_up_to_end(const std::string& t, size_t i) {
  constexpr std::string_view kImEnd = "<|im_end|>";
  std::string text;
  while (i < t.size()) {
    if (t.compare(i, kImEnd.size(), kImEnd) == 0) return text;
    const char c = t[i];
    if (c == '\'' || c == '"') return std::nullopt;
    if (c == '\\' && i + 1 < t.size()) {
      text.push_back(unescape(t[i + 1]));
      i += 2;
      continue;
    }
    text.push_back(c);
    ++i;
  }
  return std::nullopt;
}

}  // namespace

std::string extract_chatml_default_system(const std::string& t) {
  const std::string head = "<|im_start|>system";
  for (size_t at = t.find(head); at != std::string::npos; at = t.find(head, at + 1)) {
    const size_t i = system_content_start(t, at, head.size());
    if (i == std::string::npos) continue;
    if (std::optional<std::string> text = literal_up_to_end(t, i)) return *text;
  }
  return "";
}

}  // namespace plinth
