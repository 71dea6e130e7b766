#include "chat/chat_template.hpp"

#include <stdexcept>
#include <string_view>

namespace plinth {
namespace {

constexpr std::string_view kImStart = "<|im_start|>";
constexpr std::string_view kImEnd = "<|im_end|>";

bool known_role(const std::string& role) {
  return role == "system" || role == "user" || role == "assistant";
}

/// Appends to segments, merging adjacent plain text.
void push(std::vector<ChatTemplate::Segment>& out, std::string_view text, bool special) {
  if (text.empty()) return;
  if (!special && !out.empty() && !out.back().special) {
    out.back().text.append(text);
    return;
  }
  out.push_back({std::string(text), special});
}

}  // namespace

std::string extract_chatml_default_system(const std::string& t) {
  const std::string head = std::string(kImStart) + "system";
  for (size_t at = t.find(head); at != std::string::npos; at = t.find(head, at + 1)) {
    size_t i = at + head.size();
    if (t.compare(i, 1, "\n") == 0) {
      i += 1;
    } else if (t.compare(i, 2, "\\n") == 0) {
      i += 2;
    } else {
      continue;
    }
    // Read the rest of this string literal up to <|im_end|>; a closing quote first means the
    // content is an expression (e.g. messages[0]['content']), not a default.
    std::string text;
    bool found = false;
    while (i < t.size()) {
      if (t.compare(i, kImEnd.size(), kImEnd) == 0) {
        found = true;
        break;
      }
      const char c = t[i];
      if (c == '\'' || c == '"') break;
      if (c == '\\' && i + 1 < t.size()) {
        const char e = t[i + 1];
        text.push_back(e == 'n' ? '\n' : e == 't' ? '\t' : e == 'r' ? '\r' : e);
        i += 2;
        continue;
      }
      text.push_back(c);
      ++i;
    }
    if (found) return text;
  }
  return "";
}

ChatTemplate ChatTemplate::from_template_text(const std::string& jinja_text,
                                              std::string default_system) {
  if (jinja_text.find(kImStart) != std::string::npos &&
      jinja_text.find(kImEnd) != std::string::npos) {
    std::string own = extract_chatml_default_system(jinja_text);
    return ChatTemplate("chatml", own.empty() ? std::move(default_system) : std::move(own));
  }
  std::string shown = jinja_text.substr(0, 80);
  throw std::runtime_error("unrecognised chat template \"" + shown +
                           (jinja_text.size() > 80 ? "...\"" : "\"") +
                           ": only ChatML templates (<|im_start|> ... <|im_end|>) are supported; "
                           "pass a model whose tokenizer.chat_template is ChatML");
}

std::vector<ChatTemplate::Segment> ChatTemplate::render(const std::vector<ChatMessage>& messages,
                                                        bool add_generation_prompt) const {
  for (size_t i = 0; i < messages.size(); ++i) {
    if (!known_role(messages[i].role)) {
      throw std::invalid_argument("chat message " + std::to_string(i) + " has unknown role \"" +
                                  messages[i].role + "\"; allowed roles: system, user, assistant");
    }
  }
  std::vector<Segment> out;
  auto turn = [&out](std::string_view role, std::string_view content) {
    push(out, kImStart, true);
    push(out, role, false);
    push(out, "\n", false);
    push(out, content, false);
    push(out, kImEnd, true);
    push(out, "\n", false);
  };
  // As the template: the default system turn only precedes a non-empty conversation.
  if (!messages.empty() && messages.front().role != "system" && !default_system_.empty()) {
    turn("system", default_system_);
  }
  for (const auto& m : messages) turn(m.role, m.content);
  if (add_generation_prompt) {
    push(out, kImStart, true);
    push(out, "assistant\n", false);
  }
  return out;
}

std::string ChatTemplate::render_text(const std::vector<ChatMessage>& messages,
                                      bool add_generation_prompt) const {
  std::string text;
  for (const auto& s : render(messages, add_generation_prompt)) text += s.text;
  return text;
}

std::vector<std::string> ChatTemplate::stop_texts() const {
  return {std::string(kImEnd)};
}

}  // namespace plinth
