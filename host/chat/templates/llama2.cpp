// Llama 2 chat: "<s>[INST] <<SYS>>\n{system}\n<</SYS>>\n\n{user} [/INST] {assistant} </s>".
// Template: meta-llama/Llama-2-7b-chat-hf (tests/fixtures/chat_templates/llama2.jinja).
#include "chat/templates/family.hpp"

namespace plinth::chat {
namespace {

class Llama2 final : public Family {
 public:
  std::string_view name() const override { return "llama2"; }
  std::string_view description() const override {
    return "Llama 2 chat ([INST] ... [/INST] with <<SYS>>)";
  }
  bool recognises(std::string_view t) const override {
    return has(t, "[INST]") && has(t, "<<SYS>>") && has(t, "[/INST]");
  }
  SpecialTexts default_special_texts() const override { return {"<s>", "</s>", "", {}}; }
  std::vector<std::string> markers() const override {
    return {"[INST]", "[/INST]", "<<SYS>>", "<</SYS>>"};
  }
  void render(const Conversation& conv, bool, const SpecialTexts& st, Prompt& out) const override {
    const auto& msgs = conv.messages;
    if (msgs.empty()) throw_empty_error(name());
    const bool has_system = msgs[0].role == "system";
    const size_t first = has_system ? 1 : 0;
    for (size_t i = first; i < msgs.size(); ++i) {
      const size_t j = i - first;  // loop.index0
      const ChatMessage& m = msgs[i];
      if ((m.role == "user") != (j % 2 == 0)) {
        throw_message_error(conv, i, name(),
                            "requires roles to alternate user/assistant/user/... after the "
                            "optional first system message");
      }
      Prompt content;  // the template strips the <<SYS>> block and the message as one string
      if (j == 0 && has_system) {
        content.marker("<<SYS>>");
        content.text("\n" + msgs[0].content + "\n");
        content.marker("<</SYS>>");
        content.text("\n\n");
      }
      content.text(m.content);
      content.strip();
      if (m.role == "user") {
        out.marker(st.bos);
        out.marker("[INST]");
        out.text(" ");
        out.append(content);
        out.text(" ");
        out.marker("[/INST]");
      } else if (m.role == "assistant") {
        out.text(" ");
        out.append(content);
        out.text(" ");
        out.marker(st.eos);
      }  // a system message at an odd position renders nothing, as in the template
    }
  }
  std::vector<std::string> stop_texts(const SpecialTexts& st) const override { return {st.eos}; }
};

}  // namespace

const Family& llama2_family() {
  static const Llama2 f;
  return f;
}

}  // namespace plinth::chat
