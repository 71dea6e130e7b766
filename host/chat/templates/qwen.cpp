// Qwen's ChatML templates with their own rules:
//  - "qwen2.5": ChatML with a default system prompt ("You are Qwen, created by Alibaba Cloud. You
//    are a helpful assistant." unless the template writes another, e.g. Qwen2.5-Math's), tools in
//    the system turn (<tools>), assistant tool calls as <tool_call> JSON, tool results as user
//    turns of <tool_response>; raises on an empty conversation (Qwen/Qwen2.5-7B-Instruct);
//  - "qwen3": ChatML where assistant turns carry reasoning (their reasoning_content, else a
//    "<think>...</think>" split off the content), written back (as
//    "<think>\n{reasoning}\n</think>\n\n") only for assistant turns after the last user query; the
//    generation prompt takes enable_thinking (false: an empty think block) (Qwen/Qwen3-0.6B).
// Templates: llama.cpp's models/templates/Qwen-Qwen2.5-7B-Instruct.jinja, Qwen-Qwen3-0.6B.jinja.
#include <initializer_list>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "chat/templates/family.hpp"

namespace plinth::chat {
namespace {

constexpr std::string_view kStart = "<|im_start|>";
constexpr std::string_view kEnd = "<|im_end|>";
constexpr std::string_view kThink = "<think>";
constexpr std::string_view kEndThink = "</think>";

bool has_chatml(std::string_view t) {
  return has(t, kStart) && has(t, kEnd);
}

// The pieces concatenated (appending, which GCC 12's -Wrestrict does not misread as `"x" + s`).
std::string cat(std::initializer_list<std::string_view> pieces) {
  std::string out;
  for (const std::string_view p : pieces) out.append(p);
  return out;
}

// "<|im_start|>" + role + "\n" + content + "<|im_end|>" + "\n".
void turn(Prompt& out, const std::string& role, const std::string& content) {
  out.marker(kStart);
  out.text(cat({role, "\n", content}));
  out.marker(kEnd);
  out.text("\n");
}

// Qwen2.5's system turn with tools: the system message (or the template's default), then the
// tools, each as `tojson` writes it, and the <tool_call> instructions.
void tools_system(std::span<const ChatMessage> msgs, const std::vector<std::string>& tools,
                  Prompt& out) {
  out.marker(kStart);
  std::string text = "system\n";
  text += msgs[0].role == "system" ? msgs[0].content
                                   : "You are Qwen, created by Alibaba Cloud. You are a helpful "
                                     "assistant.";
  text +=
      "\n\n# Tools\n\nYou may call one or more functions to assist with the user query.\n\nYou "
      "are provided with function signatures within <tools></tools> XML tags:\n<tools>";
  for (const std::string& t : tools) text.append("\n").append(python_tojson(t));
  text +=
      "\n</tools>\n\nFor each function call, return a json object with function name and "
      "arguments within <tool_call></tool_call> XML tags:\n<tool_call>\n{\"name\": "
      "<function-name>, \"arguments\": <args-json-object>}\n</tool_call>";
  out.text(text);
  out.marker(kEnd);
  out.text("\n");
}

class Qwen25 final : public Family {
 public:
  std::string_view name() const override { return "qwen2.5"; }
  std::string_view description() const override {
    return "Qwen2.5 (ChatML with a default system prompt)";
  }
  bool recognises(std::string_view t) const override {
    return has_chatml(t) && has(t, "<tool_call>") && !has(t, kThink) &&
           has(t, "'<|im_start|>system\\n' + messages[0]['content'] + '<|im_end|>\\n'");
  }
  SpecialTexts default_special_texts() const override { return {"", std::string(kEnd), "", {}}; }
  std::string_view default_system() const override {
    return "You are Qwen, created by Alibaba Cloud. You are a helpful assistant.";
  }
  std::vector<std::string> markers() const override {
    return {std::string(kStart), std::string(kEnd)};
  }
  ToolCallSyntax tool_call_syntax() const override { return ToolCallSyntax::kHermes; }
  void render(const Conversation& conv, bool gen, const SpecialTexts& st,
              Prompt& out) const override {
    // The default system turn is conv.messages[0] (ChatTemplate prepends it).
    if (conv.messages.empty()) throw_empty_error(name());
    const auto& msgs = conv.messages;
    const bool tools = st.tools != nullptr && !st.tools->empty();
    if (tools) tools_system(msgs, *st.tools, out);
    for (size_t i = 0; i < msgs.size(); ++i) {
      const ChatMessage& m = msgs[i];
      const bool plain = m.role == "user" || (m.role == "system" && (i > 0 || !tools)) ||
                         (m.role == "assistant" && m.tool_calls.empty());
      if (plain) {
        turn(out, m.role, m.content);
      } else if (m.role == "assistant") {
        out.marker(kStart);
        out.text(m.content.empty() ? m.role : cat({m.role, "\n", m.content}));
        for (const ChatToolCall& c : m.tool_calls) {
          out.text(cat({"\n<tool_call>\n{\"name\": \"", c.name,
                        "\", \"arguments\": ", python_tojson(c.arguments), "}\n</tool_call>"}));
        }
        out.marker(kEnd);
        out.text("\n");
      } else if (m.role == "tool") {
        if (i == 0 || msgs[i - 1].role != "tool") {
          out.marker(kStart);
          out.text("user");
        }
        out.text(cat({"\n<tool_response>\n", m.content, "\n</tool_response>"}));
        if (i + 1 == msgs.size() || msgs[i + 1].role != "tool") {
          out.marker(kEnd);
          out.text("\n");
        }
      }
    }
    if (gen) {
      out.marker(kStart);
      out.text("assistant\n");
    }
  }
  std::vector<std::string> stop_texts(const SpecialTexts& st) const override {
    return {std::string(kEnd), st.eos};
  }
};

// Python's str.split(sep): the pieces between occurrences of `sep` (sep non-empty).
std::vector<std::string> split(const std::string& s, std::string_view sep) {
  std::vector<std::string> out;
  size_t from = 0;
  for (size_t at = s.find(sep); at != std::string::npos; at = s.find(sep, from)) {
    out.push_back(s.substr(from, at - from));
    from = at + sep.size();
  }
  out.push_back(s.substr(from));
  return out;
}

// Python's str.lstrip('\n') / rstrip('\n') / strip('\n').
std::string lstrip_nl(const std::string& s) {
  const size_t b = s.find_first_not_of('\n');
  return b == std::string::npos ? std::string() : s.substr(b);
}
std::string rstrip_nl(const std::string& s) {
  const size_t e = s.find_last_not_of('\n');
  return e == std::string::npos ? std::string() : s.substr(0, e + 1);
}
std::string strip_nl(const std::string& s) {
  return lstrip_nl(rstrip_nl(s));
}

bool looks_like_tool_response(const std::string& s) {
  constexpr std::string_view kOpen = "<tool_response>", kClose = "</tool_response>";
  return s.size() >= kOpen.size() && s.compare(0, kOpen.size(), kOpen) == 0 &&
         s.size() >= kClose.size() &&
         s.compare(s.size() - kClose.size(), kClose.size(), kClose) == 0;
}

class Qwen3 final : public Family {
 public:
  std::string_view name() const override { return "qwen3"; }
  std::string_view description() const override {
    return "Qwen3 (ChatML with <think> reasoning, enable_thinking)";
  }
  bool recognises(std::string_view t) const override {
    return has_chatml(t) && has(t, kThink) && has(t, "reasoning_content") &&
           has(t, "ns.last_query_index") && has(t, "enable_thinking is false");
  }
  SpecialTexts default_special_texts() const override { return {"", std::string(kEnd), "", {}}; }
  std::vector<std::string> markers() const override {
    return {std::string(kStart), std::string(kEnd), std::string(kThink), std::string(kEndThink)};
  }
  void render(const Conversation& conv, bool gen, const SpecialTexts& st,
              Prompt& out) const override {
    const auto& msgs = conv.messages;
    if (msgs.empty()) throw_empty_error(name());
    if (msgs[0].role == "system") turn(out, "system", msgs[0].content);
    // The last user turn that is not a tool response (scanning back from the end).
    size_t last_query = msgs.size() - 1;
    for (size_t k = msgs.size(); k-- > 0;) {
      if (msgs[k].role == "user" && !looks_like_tool_response(msgs[k].content)) {
        last_query = k;
        break;
      }
    }
    for (size_t i = 0; i < msgs.size(); ++i) {
      const ChatMessage& m = msgs[i];
      if (m.role == "user" || (m.role == "system" && i != 0)) {
        turn(out, m.role, m.content);
      } else if (m.role == "assistant") {
        assistant_turn(out, m, i > last_query, i + 1 == msgs.size());
      }
    }
    if (gen) {
      out.marker(kStart);
      out.text("assistant\n");
      if (st.enable_thinking == false) empty_think(out);
    }
  }
  std::vector<std::string> stop_texts(const SpecialTexts& st) const override {
    return {std::string(kEnd), st.eos};
  }

 private:
  static void empty_think(Prompt& out) {
    out.marker(kThink);
    out.text("\n\n");
    out.marker(kEndThink);
    out.text("\n\n");
  }
  static void assistant_turn(Prompt& out, const ChatMessage& m, bool after_query, bool last) {
    std::string content = m.content;
    std::string reasoning;
    if (m.reasoning_content) {
      reasoning = *m.reasoning_content;
    } else if (has(m.content, kEndThink)) {
      const std::vector<std::string> parts = split(m.content, kEndThink);
      content = lstrip_nl(parts.back());
      reasoning = lstrip_nl(split(rstrip_nl(parts.front()), kThink).back());
    }
    out.marker(kStart);
    if (after_query && (last || !reasoning.empty())) {
      out.text("assistant\n");
      out.marker(kThink);
      out.text(cat({"\n", strip_nl(reasoning), "\n"}));
      out.marker(kEndThink);
      out.text(cat({"\n\n", lstrip_nl(content)}));
    } else {
      out.text(cat({"assistant\n", content}));
    }
    out.marker(kEnd);
    out.text("\n");
  }
};

}  // namespace

const Family& qwen2_5_family() {
  static const Qwen25 f;
  return f;
}
const Family& qwen3_family() {
  static const Qwen3 f;
  return f;
}

}  // namespace plinth::chat
