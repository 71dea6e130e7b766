// Phi-3 / Phi-3.5: "<|{role}|>\n{content}<|end|>\n" per message (an empty system message is left
// out), generation prompt "<|assistant|>\n", or eos_token at the end without one.
// Template: microsoft/Phi-3.5-mini-instruct (tests/fixtures/chat_templates/phi3.jinja). Older
// Phi-3 templates (a bos_token, no <|system|>, or empty system turns kept) are other renderings and
// are not recognised.
#include "chat/templates/family.hpp"

namespace plinth::chat {
namespace {

class Phi3 final : public Family {
 public:
  std::string_view name() const override { return "phi3"; }
  std::string_view description() const override {
    return "Phi-3 / Phi-3.5 (<|system|> <|user|> <|assistant|> ... <|end|>)";
  }
  bool recognises(std::string_view t) const override {
    return has(t, "<|user|>") && has(t, "<|assistant|>") && has(t, "<|system|>") &&
           has(t, "<|end|>") && has(t, "message['role'] == 'system' and message['content']") &&
           has(t, "{% else %}{{ eos_token }}") && !has(t, "bos_token");
  }
  SpecialTexts default_special_texts() const override { return {"<s>", "<|endoftext|>", "", {}}; }
  std::vector<std::string> markers() const override {
    return {"<|system|>", "<|user|>", "<|assistant|>", "<|end|>"};
  }
  void render(const Conversation& conv, bool gen, const SpecialTexts& st,
              Prompt& out) const override {
    for (const ChatMessage& m : conv.messages) {
      if (m.role == "system" && m.content.empty()) continue;
      out.marker("<|" + m.role + "|>");
      out.text("\n" + m.content);
      out.marker("<|end|>");
      out.text("\n");
    }
    if (gen) {
      out.marker("<|assistant|>");
      out.text("\n");
    } else {
      out.marker(st.eos);
    }
  }
  std::vector<std::string> stop_texts(const SpecialTexts& st) const override {
    return {"<|end|>", st.eos};
  }
};

}  // namespace

const Family& phi3_family() {
  static const Phi3 f;
  return f;
}

}  // namespace plinth::chat
