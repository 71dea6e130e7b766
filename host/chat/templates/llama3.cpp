// Llama 3 instruct: "<|begin_of_text|><|start_header_id|>{role}<|end_header_id|>\n\n{content}
// <|eot_id|>" per message, content trimmed; generation prompt the assistant header.
// Template: meta-llama/Meta-Llama-3-8B-Instruct (tests/fixtures/chat_templates/llama3.jinja).
#include "chat/templates/family.hpp"

namespace plinth::chat {
namespace {

constexpr std::string_view kStart = "<|start_header_id|>";
constexpr std::string_view kEnd = "<|end_header_id|>";
constexpr std::string_view kEot = "<|eot_id|>";

class Llama3 final : public Family {
 public:
  std::string_view name() const override { return "llama3"; }
  std::string_view description() const override {
    return "Llama 3 (<|start_header_id|>role<|end_header_id|> ... <|eot_id|>)";
  }
  bool recognises(std::string_view t) const override {
    // Llama 3.1+ templates add tool calling and a dated system block: llama3_1.cpp.
    return has(t, kStart) && has(t, kEot) && !has(t, "Cutting Knowledge Date");
  }
  SpecialTexts default_special_texts() const override {
    return {"<|begin_of_text|>", std::string(kEot), "", {}};
  }
  std::vector<std::string> markers() const override {
    return {std::string(kStart), std::string(kEnd), std::string(kEot)};
  }
  void render(const Conversation& conv, bool gen, const SpecialTexts& st,
              Prompt& out) const override {
    for (size_t i = 0; i < conv.messages.size(); ++i) {
      const ChatMessage& m = conv.messages[i];
      if (i == 0) out.marker(st.bos);
      out.marker(kStart);
      out.text(m.role);
      out.marker(kEnd);
      out.text("\n\n" + python_strip(m.content));
      out.marker(kEot);
    }
    if (gen) {
      out.marker(kStart);
      out.text("assistant");
      out.marker(kEnd);
      out.text("\n\n");
    }
  }
  std::vector<std::string> stop_texts(const SpecialTexts&) const override {
    return {std::string(kEot), "<|end_of_text|>"};
  }
};

}  // namespace

const Family& llama3_family() {
  static const Llama3 f;
  return f;
}

}  // namespace plinth::chat
