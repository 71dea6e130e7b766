// Gemma: "<bos><start_of_turn>{user|model}\n{content trimmed}<end_of_turn>\n" per message,
// generation prompt "<start_of_turn>model\n"; roles must alternate user/model.
//  - "gemma" (google/gemma-7b-it, Gemma 2): a first system message is refused.
//  - "gemma3" (google/gemma-3-*-it): a first system message is folded into the first turn
//    as "{system}\n\n" before its content.
// Templates: tests/fixtures/chat_templates/gemma*.jinja.
#include "chat/templates/family.hpp"

namespace plinth::chat {
namespace {

constexpr std::string_view kStart = "<start_of_turn>";
constexpr std::string_view kEnd = "<end_of_turn>";

class Gemma final : public Family {
 public:
  explicit Gemma(bool fold_system) : fold_system_(fold_system) {}
  std::string_view name() const override { return fold_system_ ? "gemma3" : "gemma"; }
  std::string_view description() const override {
    return fold_system_ ? "Gemma 3 (<start_of_turn>user|model, system in the first turn)"
                        : "Gemma / Gemma 2 (<start_of_turn>user|model, no system role)";
  }
  bool recognises(std::string_view t) const override {
    if (!has(t, kStart) || !has(t, kEnd)) return false;
    return fold_system_
               ? has(t, "first_user_prefix")
               : has(t, "System role not supported") && has(t, "message['content'] | trim");
  }
  SpecialTexts default_special_texts() const override { return {"<bos>", "<eos>", "", {}}; }
  std::vector<std::string> markers() const override {
    return {std::string(kStart), std::string(kEnd)};
  }
  void render(const Conversation& conv, bool gen, const SpecialTexts& st,
              Prompt& out) const override {
    const auto& msgs = conv.messages;
    out.marker(st.bos);
    if (msgs.empty()) throw_empty_error(name());
    const bool has_system = msgs[0].role == "system";
    if (has_system && !fold_system_) {
      throw_message_error(conv, 0, name(), "does not support a system role");
    }
    const size_t first = has_system ? 1 : 0;
    for (size_t i = first; i < msgs.size(); ++i) {
      const ChatMessage& m = msgs[i];
      if ((m.role == "user") != ((i - first) % 2 == 0)) {
        throw_message_error(conv, i, name(),
                            fold_system_ ? "requires roles to alternate user/assistant/user/... "
                                           "after the optional first system message"
                                         : "requires roles to alternate user/assistant/user/...");
      }
      out.marker(kStart);
      std::string text = (m.role == "assistant" ? "model" : m.role) + "\n";
      if (i == first && has_system) text += msgs[0].content + "\n\n";
      out.text(text + python_strip(m.content));
      out.marker(kEnd);
      out.text("\n");
    }
    if (gen) {
      out.marker(kStart);
      out.text("model\n");
    }
  }
  std::vector<std::string> stop_texts(const SpecialTexts& st) const override {
    return {std::string(kEnd), st.eos};
  }

 private:
  bool fold_system_;
};

}  // namespace

const Family& gemma_family() {
  static const Gemma f(false);
  return f;
}
const Family& gemma3_family() {
  static const Gemma f(true);
  return f;
}

}  // namespace plinth::chat
