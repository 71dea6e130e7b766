// "mistral-nemo": the Tekken-tokenizer template of mistralai/Mistral-Nemo-Instruct-2407:
// "<s>[INST]{user}[/INST]{assistant}</s>", the system message folded into the last user turn
// when the conversation ends with one, and tool calling:
//  - the tools before the last user turn (every user turn equal to it, as the template compares
//    messages): "[AVAILABLE_TOOLS][" + per tool '{"type": "function", "function": {' + its
//    function's members but "return" ('"key": "value"' for a string, written as is; '"key": ' +
//    tojson otherwise) + "}}", ", " between, "]" + "[/AVAILABLE_TOOLS]";
//  - an assistant turn's calls: "[TOOL_CALLS][" + per call '{"name": ..., "arguments": ...' +
//    ', "id": "<id>"}', ", " between, "]" + eos;
//  - a tool turn: '[TOOL_RESULTS]{"content": ' + content as is + ', "call_id": "<id>"}' +
//    "[/TOOL_RESULTS]";
// ids must be 9 characters long (the template raises otherwise); turns other than tool turns and
// turns with calls must alternate user / assistant. add_generation_prompt changes nothing.
// Template: llama.cpp's models/templates/mistralai-Mistral-Nemo-Instruct-2407.jinja.
#include <string>

#include <nlohmann/json.hpp>

#include "chat/templates/family.hpp"

namespace plinth::chat {
namespace {

constexpr std::string_view kAlternate =
    "requires roles to alternate user/assistant/user/... after the optional first system message";
constexpr std::string_view kBadId = "requires tool call ids of 9 characters";

// Python's len() of UTF-8 text: its code points.
size_t code_points(const std::string& s) {
  size_t n = 0;
  for (const char c : s) n += (static_cast<unsigned char>(c) & 0xC0) != 0x80 ? 1 : 0;
  return n;
}

bool tool_turn_or_calls(const ChatMessage& m) {
  return m.role == "tool" || !m.tool_calls.empty();
}

class MistralNemo final : public Family {
 public:
  std::string_view name() const override { return "mistral-nemo"; }
  std::string_view description() const override {
    return "Mistral Nemo / Tekken ([INST]user[/INST], system in the last user turn, "
           "[TOOL_CALLS])";
  }
  bool recognises(std::string_view t) const override {
    return has(t, "[INST]") && has(t, "[/INST]") && !has(t, "<<SYS>>") &&
           has(t, "\"[INST]\" + message[\"content\"] + \"[/INST]\"") &&
           has(t, "{{- message[\"content\"] + eos_token}}");
  }
  SpecialTexts default_special_texts() const override { return {"<s>", "</s>", "", {}}; }
  std::vector<std::string> markers() const override {
    return {"[INST]",       "[/INST]",        "[AVAILABLE_TOOLS]", "[/AVAILABLE_TOOLS]",
            "[TOOL_CALLS]", "[TOOL_RESULTS]", "[/TOOL_RESULTS]"};
  }
  ToolCallSyntax tool_call_syntax() const override { return ToolCallSyntax::kMistralNemo; }

  void render(const Conversation& conv, bool, const SpecialTexts& st, Prompt& out) const override {
    const auto& msgs = conv.messages;
    if (msgs.empty()) throw_empty_error(name());
    const bool has_system = msgs[0].role == "system";
    const size_t first = has_system ? 1 : 0;
    const ChatMessage* last_user = check_alternation(conv, first);
    const bool tools = st.tools != nullptr && !st.tools->empty();
    out.marker(st.bos);
    for (size_t i = first; i < msgs.size(); ++i) {
      const ChatMessage& m = msgs[i];
      if (m.role == "user") {
        if (tools && m.content == last_user->content) available_tools(*st.tools, out);
        const bool fold = has_system && i + 1 == msgs.size();
        out.marker("[INST]");
        out.text(fold ? std::string(msgs[0].content).append("\n\n").append(m.content) : m.content);
        out.marker("[/INST]");
      } else if (!m.tool_calls.empty()) {
        tool_calls(conv, i, st, out);
      } else if (m.role == "assistant") {
        out.text(m.content);
        out.marker(st.eos);
      } else if (m.role == "tool") {
        tool_result(conv, i, out);
      } else {
        throw_message_error(
            conv, i, name(),
            "supports only user and assistant roles after the optional first system message");
      }
    }
  }
  std::vector<std::string> stop_texts(const SpecialTexts& st) const override { return {st.eos}; }

 private:
  // The template's check: turns other than tool turns and turns with calls alternate user /
  // assistant from `first` on. Returns the last user turn (null: none).
  const ChatMessage* check_alternation(const Conversation& conv, size_t first) const {
    size_t position = 0;
    const ChatMessage* last_user = nullptr;
    for (size_t i = first; i < conv.messages.size(); ++i) {
      const ChatMessage& m = conv.messages[i];
      if (m.role == "user") last_user = &m;
      if (tool_turn_or_calls(m)) continue;
      if ((m.role == "user") != (position++ % 2 == 0)) {
        throw_message_error(conv, i, name(), kAlternate);
      }
    }
    return last_user;
  }
  // "[TOOL_CALLS][{"name": ..., "arguments": ..., "id": "..."}, ...]" + eos.
  void tool_calls(const Conversation& conv, size_t i, const SpecialTexts& st, Prompt& out) const {
    const ChatMessage& m = conv.messages[i];
    out.marker("[TOOL_CALLS]");
    std::string text = "[";
    for (size_t c = 0; c < m.tool_calls.size(); ++c) {
      const ChatToolCall& call = m.tool_calls[c];
      if (code_points(call.id) != 9) throw_message_error(conv, i, name(), kBadId);
      nlohmann::ordered_json fn = {{"name", call.name}};
      fn["arguments"] = nlohmann::ordered_json::parse(call.arguments, nullptr, false);
      const std::string json = python_tojson(fn.dump());
      text.append(json, 0, json.size() - 1).append(", \"id\": \"").append(call.id).append("\"}");
      text += c + 1 < m.tool_calls.size() ? ", " : "]";
    }
    out.text(text);
    out.marker(st.eos);
  }
  // '[TOOL_RESULTS]{"content": <content as is>, "call_id": "<id>"}[/TOOL_RESULTS]'.
  void tool_result(const Conversation& conv, size_t i, Prompt& out) const {
    const ChatMessage& m = conv.messages[i];
    if (code_points(m.tool_call_id) != 9) throw_message_error(conv, i, name(), kBadId);
    out.marker("[TOOL_RESULTS]");
    out.text(std::string("{\"content\": ")
                 .append(m.content)
                 .append(", \"call_id\": \"")
                 .append(m.tool_call_id)
                 .append("\"}"));
    out.marker("[/TOOL_RESULTS]");
  }
  // "[AVAILABLE_TOOLS][{...}, {...}][/AVAILABLE_TOOLS]".
  static void available_tools(const std::vector<std::string>& tools, Prompt& out) {
    out.marker("[AVAILABLE_TOOLS]");
    std::string text = "[";
    for (size_t t = 0; t < tools.size(); ++t) {
      const auto tool = nlohmann::ordered_json::parse(tools[t], nullptr, false);
      const auto fn = tool.is_object() ? tool.find("function") : tool.end();
      text += "{\"type\": \"function\", \"function\": {";
      bool first = true;
      if (fn != tool.end() && fn->is_object()) {
        for (auto it = fn->begin(); it != fn->end(); ++it) {
          if (it.key() == "return") continue;
          if (!first) text += ", ";
          first = false;
          // appended piece by piece (GCC 12's -Wrestrict misreads `"x" + s`)
          text.append("\"").append(it.key()).append("\": ");
          if (it->is_string()) {
            text.append("\"").append(it->get<std::string>()).append("\"");
          } else {
            text.append(python_tojson(it->dump()));
          }
        }
      }
      text += "}}";
      text += t + 1 < tools.size() ? ", " : "]";
    }
    out.text(text);
    out.marker("[/AVAILABLE_TOOLS]");
  }
};

}  // namespace

const Family& mistral_nemo_family() {
  static const MistralNemo f;
  return f;
}

}  // namespace plinth::chat
