// Zephyr (HuggingFaceH4/zephyr-7b-beta, TinyLlama-Chat): "<|{role}|>\n{content}</s>\n" per
// message, generation prompt "<|assistant|>\n" after the last message (none for an empty
// conversation). Template: tests/fixtures/chat_templates/zephyr.jinja.
#include "chat/templates/family.hpp"

namespace plinth::chat {
namespace {

class Zephyr final : public Family {
 public:
  std::string_view name() const override { return "zephyr"; }
  std::string_view description() const override {
    return "Zephyr (<|user|> <|assistant|> ... eos_token; TinyLlama-Chat)";
  }
  bool recognises(std::string_view t) const override {
    return has(t, "<|user|>") && has(t, "<|assistant|>") && !has(t, "<|end|>") &&
           has(t, "message['content'] + eos_token") &&
           has(t, "loop.last and add_generation_prompt");
  }
  SpecialTexts default_special_texts() const override { return {"<s>", "</s>", "", {}}; }
  std::vector<std::string> markers() const override {
    return {"<|system|>", "<|user|>", "<|assistant|>"};
  }
  void render(const Conversation& conv, bool gen, const SpecialTexts& st,
              Prompt& out) const override {
    for (const ChatMessage& m : conv.messages) {
      out.marker("<|" + m.role + "|>");
      out.text("\n" + m.content);
      out.marker(st.eos);
      out.text("\n");
    }
    if (gen && !conv.messages.empty()) {
      out.marker("<|assistant|>");
      out.text("\n");
    }
  }
  std::vector<std::string> stop_texts(const SpecialTexts& st) const override { return {st.eos}; }
};

}  // namespace

const Family& zephyr_family() {
  static const Zephyr f;
  return f;
}

}  // namespace plinth::chat
