// Llama 3.1 / 3.3 and Llama 3.2 instruct, without tools: bos, a system turn that is always there
// ("Cutting Knowledge Date: December 2023\nToday Date: {date}\n\n{system trimmed}"), then the
// Llama 3 turns ("<|start_header_id|>{role}<|end_header_id|>\n\n{content trimmed}<|eot_id|>").
//  - "llama3.1" (meta-llama/Llama-3.1-8B-Instruct, Llama-3.3-70B-Instruct): date_string defaults
//    to "26 Jul 2024";
//  - "llama3.2" (meta-llama/Llama-3.2-*-Instruct): date_string defaults to today,
//    strftime_now("%d %b %Y") as HF's apply_chat_template provides it.
// Tools (custom tools, the templates' default tools_in_user_message = true): "Environment:
// ipython\n" opens the system turn; the first message after the system one becomes a user turn
// with the JSON-call instructions and each tool as `tojson(indent=4)`; an assistant turn's one
// tool call is written as {"name": "<name>", "parameters": <arguments as tojson>}; a tool
// ("ipython") turn's content as `tojson` writes a string (quoted: the templates test
// `content is iterable`, which a string is). The templates raise on an assistant turn with more
// than one call, and on tools without a message after the system one. builtin_tools (Llama
// 3.1's <|python_tag|> brave_search / wolfram_alpha calls) are not taken: OpenAI's API has none.
// Templates: tests/fixtures/chat_templates/llama3.1.jinja, llama3.2.jinja; llama.cpp's
// models/templates/meta-llama-Llama-3.{1-8B,2-3B,3-70B}-Instruct.jinja.
#include <ctime>
#include <string>

#include <nlohmann/json.hpp>

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
    return today_ ? "Llama 3.2 (a dated system turn, today's date; JSON tool calls)"
                  : "Llama 3.1 / 3.3 (a dated system turn, \"26 Jul 2024\"; JSON tool calls)";
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
  ToolCallSyntax tool_call_syntax() const override { return ToolCallSyntax::kLlama3Json; }
  void render(const Conversation& conv, bool gen, const SpecialTexts& st,
              Prompt& out) const override {
    const auto& msgs = conv.messages;
    out.marker(st.bos);
    if (msgs.empty()) throw_empty_error(name());
    const bool tools = st.tools != nullptr && !st.tools->empty();
    const bool has_system = msgs[0].role == "system";
    const std::string date = !st.date_string.empty() ? st.date_string
                             : today_                ? today()
                                                     : "26 Jul 2024";
    header(out, "system");
    out.text(std::string(tools ? "Environment: ipython\n" : "") +
             "Cutting Knowledge Date: December 2023\nToday Date: " + date + "\n\n" +
             (has_system ? python_strip(msgs[0].content) : ""));
    out.marker(kEot);
    size_t i = has_system ? 1 : 0;
    if (tools) {
      if (i == msgs.size()) {
        throw_message_error(conv, i - 1, name(),
                            "puts the tools in the first user message and there is none after "
                            "the system message");
      }
      header(out, "user");
      std::string text =
          "Given the following functions, please respond with a JSON for a function call with "
          "its proper arguments that best answers the given prompt.\n\nRespond in the format "
          "{\"name\": function name, \"parameters\": dictionary of argument name and its "
          "value}.Do not use variables.\n\n";
      for (const std::string& t : *st.tools) text += python_tojson(t, 4) + "\n\n";
      out.text(text + python_strip(msgs[i].content));
      out.marker(kEot);
      ++i;
    }
    for (; i < msgs.size(); ++i) message(conv, i, out);
    if (gen) header(out, "assistant");
  }
  std::vector<std::string> stop_texts(const SpecialTexts&) const override {
    return {std::string(kEot), "<|eom_id|>", "<|end_of_text|>"};
  }

 private:
  void message(const Conversation& conv, size_t i, Prompt& out) const {
    const ChatMessage& m = conv.messages[i];
    if (!m.tool_calls.empty()) {
      if (m.tool_calls.size() != 1) {
        throw_message_error(conv, i, name(),
                            "takes one tool call per assistant message (\"This model only "
                            "supports single tool-calls at once!\"); this one has " +
                                std::to_string(m.tool_calls.size()));
      }
      const ChatToolCall& c = m.tool_calls[0];
      header(out, "assistant");
      out.text("{\"name\": \"" + c.name + "\", \"parameters\": " + python_tojson(c.arguments) +
               "}");
    } else if (m.role == "tool" || m.role == "ipython") {
      header(out, "ipython");
      // json.dumps(content, ensure_ascii=False): nlohmann escapes the same characters.
      out.text(
          nlohmann::json(m.content).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
    } else {
      header(out, m.role);
      out.text(python_strip(m.content));
    }
    out.marker(kEot);
  }
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
