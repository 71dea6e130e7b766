// Llama 3.1 / 3.3 and Llama 3.2 instruct, without tools: bos, a system turn that is always there
// ("Cutting Knowledge Date: December 2023\nToday Date: {date}\n\n{system trimmed}"), then the
// Llama 3 turns ("<|start_header_id|>{role}<|end_header_id|>\n\n{content trimmed}<|eot_id|>").
//  - "llama3.1" (meta-llama/Llama-3.1-8B-Instruct, Llama-3.3-70B-Instruct): date_string defaults
//    to "26 Jul 2024";
//  - "llama3.2" (meta-llama/Llama-3.2-*-Instruct): date_string defaults to today,
//    strftime_now("%d %b %Y") as HF's apply_chat_template provides it.
// Tool definitions and tool roles are not supported (ChatTemplate accepts system/user/assistant).
// Templates: tests/fixtures/chat_templates/llama3.1.jinja, llama3.2.jinja.
#include <ctime>

#include "chat/templates/family.hpp"

namespace plinth::chat {
namespace {

constexpr std::string_view kStart = "<|start_header_id|>";
constexpr std::string_view kEnd = "<|end_header_id|>";
constexpr std::string_view kEot = "<|eot_id|>";

std::string today() {
  const std::time_t now = std::time(nullptr);
  std::tm local{};
  localtime_r(&now, &local);
  char buf[32];
  const size_t n = std::strftime(buf, sizeof buf, "%d %b %Y", &local);
  return std::string(buf, n);
}

class Llama31 final : public Family {
 public:
  explicit Llama31(bool today_by_default) : today_(today_by_default) {}
  std::string_view name() const override { return today_ ? "llama3.2" : "llama3.1"; }
  std::string_view description() const override {
    return today_ ? "Llama 3.2 (a dated system turn, today's date; no tools)"
                  : "Llama 3.1 / 3.3 (a dated system turn, \"26 Jul 2024\"; no tools)";
  }
  bool recognises(std::string_view t) const override {
    return has(t, kStart) && has(t, kEot) && has(t, "Cutting Knowledge Date: December 2023") &&
           has(t, "\"Today Date: \" + date_string") &&
           has(t, "set date_string = \"26 Jul 2024\"") && has(t, "strftime_now") == today_;
  }
  SpecialTexts default_special_texts() const override {
    return {"<|begin_of_text|>", std::string(kEot), "", {}};
  }
  std::vector<std::string> markers() const override {
    return {std::string(kStart), std::string(kEnd), std::string(kEot)};
  }
  void render(const Conversation& conv, bool gen, const SpecialTexts& st,
              Prompt& out) const override {
    const auto& msgs = conv.messages;
    out.marker(st.bos);
    if (msgs.empty()) throw_empty_error(name());
    const bool has_system = msgs[0].role == "system";
    const std::string date = !st.date_string.empty() ? st.date_string
                             : today_                ? today()
                                                     : "26 Jul 2024";
    header(out, "system");
    out.text("Cutting Knowledge Date: December 2023\nToday Date: " + date + "\n\n" +
             (has_system ? python_strip(msgs[0].content) : ""));
    out.marker(kEot);
    for (size_t i = has_system ? 1 : 0; i < msgs.size(); ++i) {
      header(out, msgs[i].role);
      out.text(python_strip(msgs[i].content));
      out.marker(kEot);
    }
    if (gen) header(out, "assistant");
  }
  std::vector<std::string> stop_texts(const SpecialTexts&) const override {
    return {std::string(kEot), "<|eom_id|>", "<|end_of_text|>"};
  }

 private:
  static void header(Prompt& out, const std::string& role) {
    out.marker(kStart);
    out.text(role);
    out.marker(kEnd);
    out.text("\n\n");
  }
  bool today_;
};

}  // namespace

const Family& llama3_1_family() {
  static const Llama31 f(false);
  return f;
}
const Family& llama3_2_family() {
  static const Llama31 f(true);
  return f;
}

}  // namespace plinth::chat
