// Shared pieces of the chat-template families: Prompt, Conversation::where, errors, strip.
#include <stdexcept>

#include <nlohmann/json.hpp>

#include "chat/templates/family.hpp"

namespace plinth::chat {

void Prompt::marker(std::string_view text) {
  if (!text.empty()) pieces_.push_back({std::string(text), true});
}

void Prompt::text(std::string_view text) {
  if (text.empty()) return;
  if (!pieces_.empty() && !pieces_.back().marker) {
    pieces_.back().text.append(text);
    return;
  }
  pieces_.push_back({std::string(text), false});
}

void Prompt::append(const Prompt& other) {
  for (const Piece& p : other.pieces_) p.marker ? marker(p.text) : text(p.text);
}

void Prompt::strip() {
  while (!pieces_.empty() && !pieces_.front().marker) {
    std::string& t = pieces_.front().text;
    const std::string kept = python_strip(t + "x");  // strips the front only
    t = kept.substr(0, kept.size() - 1);
    if (!t.empty()) break;
    pieces_.erase(pieces_.begin());
  }
  while (!pieces_.empty() && !pieces_.back().marker) {
    std::string& t = pieces_.back().text;
    t = python_strip("x" + t).substr(1);  // strips the back only
    if (!t.empty()) break;
    pieces_.pop_back();
  }
}

std::string Conversation::where(size_t i) const {
  if (i < prepended) return "the default system prompt";
  return "chat message " + std::to_string(i - prepended) + " (role \"" + messages[i].role + "\")";
}

void throw_message_error(const Conversation& conv, size_t i, std::string_view family,
                         std::string_view rule) {
  throw std::invalid_argument(conv.where(i) + ": the " + std::string(family) + " chat template " +
                              std::string(rule));
}

void throw_empty_error(std::string_view family) {
  throw std::invalid_argument("the " + std::string(family) +
                              " chat template needs at least one message (it reads "
                              "messages[0]); the conversation is empty");
}

namespace {

/// Length of the Python-whitespace code point at the start of `s`, or 0.
size_t space_at_front(std::string_view s) {
  if (s.empty()) return 0;
  const auto b = static_cast<unsigned char>(s[0]);
  if (b == ' ' || (b >= 0x09 && b <= 0x0d) || (b >= 0x1c && b <= 0x1f)) return 1;
  if (s.size() >= 2 && b == 0xc2) {
    const auto c = static_cast<unsigned char>(s[1]);
    return (c == 0x85 || c == 0xa0) ? 2 : 0;
  }
  if (s.size() >= 3) {
    const auto c = static_cast<unsigned char>(s[1]), d = static_cast<unsigned char>(s[2]);
    if (b == 0xe1 && c == 0x9a && d == 0x80) return 3;  // U+1680
    if (b == 0xe2 && c == 0x80 && (d <= 0x8a || d == 0xa8 || d == 0xa9 || d == 0xaf)) return 3;
    if (b == 0xe2 && c == 0x81 && d == 0x9f) return 3;  // U+205F
    if (b == 0xe3 && c == 0x80 && d == 0x80) return 3;  // U+3000
  }
  return 0;
}

/// Length of the Python-whitespace code point ending `s`, or 0.
size_t space_at_back(std::string_view s) {
  for (size_t n = 1; n <= 3 && n <= s.size(); ++n) {
    if (space_at_front(s.substr(s.size() - n)) == n) return n;
  }
  return 0;
}

}  // namespace

std::string python_strip(std::string_view text) {
  while (const size_t n = space_at_front(text)) text.remove_prefix(n);
  while (const size_t n = space_at_back(text)) text.remove_suffix(n);
  return std::string(text);
}

namespace {

// json.dumps(indent=N) of `v` at nesting `level` (N > 0).
void write_python_json_indented(const nlohmann::ordered_json& v, int indent, int level,
                                std::string& out) {
  const bool object = v.is_object();
  if ((!object && !v.is_array()) || v.empty()) {
    out += v.is_structured()
               ? (object ? "{}" : "[]")
               : v.dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::replace);
    return;
  }
  const std::string inner(static_cast<size_t>(indent) * static_cast<size_t>(level + 1), ' ');
  out += object ? '{' : '[';
  bool first = true;
  for (auto it = v.begin(); it != v.end(); ++it) {
    out += first ? "\n" : ",\n";
    first = false;
    out += inner;
    if (object) {
      out += nlohmann::ordered_json(it.key()).dump(
          -1, ' ', false, nlohmann::ordered_json::error_handler_t::replace);
      out += ": ";
    }
    write_python_json_indented(*it, indent, level + 1, out);
  }
  out += '\n';
  out.append(static_cast<size_t>(indent) * static_cast<size_t>(level), ' ');
  out += object ? '}' : ']';
}

void write_python_json(const nlohmann::ordered_json& v, std::string& out) {
  if (v.is_object()) {
    out += '{';
    bool first = true;
    for (const auto& [key, value] : v.items()) {
      if (!first) out += ", ";
      first = false;
      out += nlohmann::ordered_json(key).dump(-1, ' ', false,
                                              nlohmann::ordered_json::error_handler_t::replace);
      out += ": ";
      write_python_json(value, out);
    }
    out += '}';
  } else if (v.is_array()) {
    out += '[';
    for (size_t i = 0; i < v.size(); ++i) {
      if (i > 0) out += ", ";
      write_python_json(v[i], out);
    }
    out += ']';
  } else {
    out += v.dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::replace);
  }
}

}  // namespace

std::string python_tojson(std::string_view json_text) {
  const auto v = nlohmann::ordered_json::parse(json_text, nullptr, false);
  if (v.is_discarded()) {
    throw std::invalid_argument("not JSON text: " + std::string(json_text.substr(0, 80)));
  }
  std::string out;
  write_python_json(v, out);
  return out;
}

std::string python_tojson(std::string_view json_text, int indent) {
  const auto v = nlohmann::ordered_json::parse(json_text, nullptr, false);
  if (v.is_discarded()) {
    throw std::invalid_argument("not JSON text: " + std::string(json_text.substr(0, 80)));
  }
  std::string out;
  write_python_json_indented(v, indent, 0, out);
  return out;
}

std::span<const Family* const> all_families() {
  // The signatures are disjoint (each family also checks the others' distinguishing phrases),
  // so the order is only the order names are listed in.
  static const Family* const kAll[] = {
      &chatml_family(),     &qwen2_5_family(),    &qwen3_family(),        &llama2_family(),
      &llama3_family(),     &llama3_1_family(),   &llama3_2_family(),     &mistral_family(),
      &mistral_v1_family(), &mistral_v3_family(), &mistral_nemo_family(), &gemma_family(),
      &gemma3_family(),     &phi3_family(),       &zephyr_family(),
  };
  return kAll;
}

}  // namespace plinth::chat
