// ChatML (SmolLM2, Qwen, OpenHermes, ...): "<|im_start|>{role}\n{content}<|im_end|>\n" per message,
// generation prompt "<|im_start|>assistant\n". Template: teknium/OpenHermes-2.5-Mistral-7B.
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
    // Phi-4's "<|im_start|>system<|im_sep|>" is another format.
    return has(t, kStart) && has(t, kEnd) && !has(t, "<|im_sep|>");
  }
  SpecialTexts default_special_texts() const override { return {"", std::string(kEnd), ""}; }
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

std::string extract_chatml_default_system(const std::string& t) {
  const std::string head = "<|im_start|>system";
  for (size_t at = t.find(head); at != std::string::npos; at = t.find(head, at + 1)) {
    size_t i = at + head.size();
    if (t.compare(i, 1, "\n") == 0) {
      i += 1;
    } else if (t.compare(i, 2, "\\n") == 0) {
      i += 2;
    } else {
      continue;
    }
    // Read the rest of this string literal up to <|im_end|>; a closing quote first means the
    // content is an expression (e.g. messages[0]['content']), not a default.
    std::string text;
    bool found = false;
    while (i < t.size()) {
      if (t.compare(i, std::string_view("<|im_end|>").size(), std::string_view("<|im_end|>")) ==
          0) {
        found = true;
        break;
      }
      const char c = t[i];
      if (c == '\'' || c == '"') break;
      if (c == '\\' && i + 1 < t.size()) {
        const char e = t[i + 1];
        text.push_back(e == 'n' ? '\n' : e == 't' ? '\t' : e == 'r' ? '\r' : e);
        i += 2;
        continue;
      }
      text.push_back(c);
      ++i;
    }
    if (found) return text;
  }
  return "";
}

}  // namespace plinth
