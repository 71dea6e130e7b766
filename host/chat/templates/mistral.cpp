// Mistral instruct, the three template styles Hugging Face has published (no <<SYS>> block):
//  - "mistral": "<s>[INST] {user} [/INST]{assistant}</s>", no system role
//    (mistralai/Mixtral-8x7B-Instruct-v0.1, the first Mistral-7B-Instruct-v0.1/v0.2 template);
//  - "mistral-v1": "<s> [INST] {system}\n\n{user} [/INST] {assistant}</s>", the system message
//    folded into the first user turn (mistralai/Mistral-7B-Instruct-v0.1 today);
//  - "mistral-v3": "<s>[INST] {user}[/INST] {assistant trimmed}</s>", the system message folded
//    into the last user turn when the conversation ends with one
//    (mistralai/Mistral-7B-Instruct-v0.3, tools not supported).
// ("mistral-nemo", v3 without the spaces and with tools: mistral_nemo.cpp.)
// Templates: tests/fixtures/chat_templates/mistral*.jinja.
#include "chat/templates/family.hpp"

namespace plinth::chat {
namespace {

constexpr std::string_view kAlternate =
    "requires roles to alternate user/assistant/user/... after the optional first system message";
constexpr std::string_view kOnlyUserAssistant =
    "supports only user and assistant roles after the optional first system message";

enum class Style { kClassic, kV1, kV3 };

class Mistral final : public Family {
 public:
  explicit Mistral(Style style) : style_(style) {}
  std::string_view name() const override {
    return style_ == Style::kClassic ? "mistral"
           : style_ == Style::kV1    ? "mistral-v1"
                                     : "mistral-v3";
  }
  std::string_view description() const override {
    switch (style_) {
      case Style::kClassic:
        return "Mistral / Mixtral v0.1 ([INST] user [/INST], no system role)";
      case Style::kV1:
        return "Mistral v1 ( [INST] system\\n\\nuser [/INST], system in the first user turn)";
      case Style::kV3:
        return "Mistral v3 ([INST] user[/INST], system in the last user turn)";
    }
    return "";
  }
  bool recognises(std::string_view t) const override {
    if (!has(t, "[INST]") || !has(t, "[/INST]") || has(t, "<<SYS>>")) return false;
    switch (style_) {
      case Style::kClassic:
        return has(t, "'[INST] '") && has(t, "' [/INST]'") && !has(t, "system_message") &&
               has(t, "message['content'] + eos_token}}");
      case Style::kV1:
        return has(t, "' [INST] '") && has(t, "' [/INST]'") && has(t, "system_message") &&
               has(t, "' ' + message['content'] + eos_token");
      case Style::kV3:
        return has(t, "\"[INST] \" + message[\"content\"] + \"[/INST]\"") &&
               has(t, "\" \" + message[\"content\"]|trim + eos_token");
    }
    return false;
  }
  SpecialTexts default_special_texts() const override { return {"<s>", "</s>", "", {}}; }
  std::vector<std::string> markers() const override { return {"[INST]", "[/INST]"}; }

  void render(const Conversation& conv, bool, const SpecialTexts& st, Prompt& out) const override {
    const auto& msgs = conv.messages;
    if (style_ == Style::kClassic) {
      render_classic(conv, st, out);
      return;
    }
    if (msgs.empty()) throw_empty_error(name());
    const bool has_system = msgs[0].role == "system";
    const size_t first = has_system ? 1 : 0;
    // v3 checks every turn before writing anything; the outcome is the same either way.
    for (size_t i = first; i < msgs.size(); ++i) check_alternation(conv, i, i - first);
    out.marker(st.bos);
    for (size_t i = first; i < msgs.size(); ++i) {
      const ChatMessage& m = msgs[i];
      if (m.role == "user") {
        const bool fold = has_system && (style_ == Style::kV1 ? i == first : i + 1 == msgs.size());
        const std::string system = fold ? msgs[0].content + "\n\n" : "";
        if (style_ == Style::kV1) {
          out.text(" ");
          user_turn(out, system, m.content, " ");
        } else {
          user_turn(out, system, m.content, "");
        }
      } else if (m.role == "assistant") {
        out.text(assistant_text(m.content));
        out.marker(st.eos);
      } else {
        throw_message_error(conv, i, name(), kOnlyUserAssistant);
      }
    }
  }
  std::vector<std::string> stop_texts(const SpecialTexts& st) const override { return {st.eos}; }

 private:
  /// "mistral": "[INST] user [/INST]assistant</s>" per pair, no system role.
  void render_classic(const Conversation& conv, const SpecialTexts& st, Prompt& out) const {
    const auto& msgs = conv.messages;
    out.marker(st.bos);
    for (size_t i = 0; i < msgs.size(); ++i) {
      check_alternation(conv, i, i);
      if (msgs[i].role == "user") {
        user_turn(out, "", msgs[i].content, " ");
      } else if (msgs[i].role == "assistant") {
        out.text(msgs[i].content);
        out.marker(st.eos);
      } else {
        throw_message_error(conv, i, name(), "supports only user and assistant roles");
      }
    }
  }
  /// What an assistant turn writes before eos: " " + content (v3: trimmed).
  std::string assistant_text(const std::string& content) const {
    return " " + (style_ == Style::kV3 ? python_strip(content) : content);
  }
  /// "[INST]" + after_open + system + content + before_close + "[/INST]".
  static void user_turn(Prompt& out, const std::string& system, const std::string& content,
                        std::string_view before_close, std::string_view after_open = " ") {
    out.marker("[INST]");
    out.text(std::string(after_open) + system + content + std::string(before_close));
    out.marker("[/INST]");
  }
  void check_alternation(const Conversation& conv, size_t i, size_t position) const {
    if ((conv.messages[i].role == "user") != (position % 2 == 0)) {
      throw_message_error(conv, i, name(),
                          style_ == Style::kClassic
                              ? "requires roles to alternate user/assistant/user/... (no system "
                                "role)"
                              : kAlternate);
    }
  }

  Style style_;
};

}  // namespace

const Family& mistral_family() {
  static const Mistral f(Style::kClassic);
  return f;
}
const Family& mistral_v1_family() {
  static const Mistral f(Style::kV1);
  return f;
}
const Family& mistral_v3_family() {
  static const Mistral f(Style::kV3);
  return f;
}

}  // namespace plinth::chat
