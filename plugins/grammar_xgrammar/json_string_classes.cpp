#include "json_string_classes.hpp"

#include <string_view>

namespace plinth::grammar {

namespace {

/// Copies ebnf[i + 1 ...] up to (not including) the next unescaped `end` into `out`; returns the
/// index of the last byte copied.
size_t copy_until(const std::string& ebnf, size_t i, char end, std::string& out) {
  while (i + 1 < ebnf.size() && ebnf[i + 1] != end) {
    out += ebnf[++i];
    if (ebnf[i] == '\\' && i + 1 < ebnf.size()) out += ebnf[++i];
  }
  return i;
}

}  // namespace

std::string json_string_classes(const std::string& ebnf) {
  // As XGrammar prints them: the length-limited string's character class, and its replacement.
  constexpr std::string_view kLengthClass = R"([^\"\\\r\n])";
  constexpr std::string_view kJsonClass = R"(\0-\x1f\"\\])";
  constexpr std::string_view kNoSurrogates = R"(\ud800-\udfff)";
  std::string out;
  out.reserve(ebnf.size() + ebnf.size() / 8);
  for (size_t i = 0; i < ebnf.size(); ++i) {
    const char c = ebnf[i];
    out += c;
    if (c == '"') {
      // A quoted literal, kept whole (its "[^" is no class).
      i = copy_until(ebnf, i, '"', out);
      if (i + 1 < ebnf.size()) out += ebnf[++i];
    } else if (c == '[' && std::string_view(ebnf).substr(i).starts_with(kLengthClass)) {
      out += '^';
      out += kNoSurrogates;
      out += kJsonClass;
      i += kLengthClass.size() - 1;
    } else if (c == '[' && i + 1 < ebnf.size() && ebnf[i + 1] == '^') {
      out += '^';
      out += kNoSurrogates;
      i = copy_until(ebnf, i + 1, ']', out);  // a class's '"' opens no literal
    } else if (c == '[') {
      i = copy_until(ebnf, i, ']', out);  // a positive class, kept
    }
  }
  return out;
}

std::string pattern_without_surrogates(const std::string& pattern) {
  constexpr std::string_view kSurrogates = R"(\uD800-\uDFFF)";
  std::string out;
  bool in_class = false;
  for (size_t i = 0; i < pattern.size(); ++i) {
    const char c = pattern[i];
    if (c == '\\' && i + 1 < pattern.size()) {
      const char e = pattern[++i];
      if (!in_class && (e == 'S' || e == 'W' || e == 'D')) {
        out += "[^\\";
        out += static_cast<char>(e - 'A' + 'a');  // \S -> [^\s...]
        out += kSurrogates;
        out += ']';
      } else {
        out += c;
        out += e;
      }
      continue;
    }
    out += c;
    if (in_class) {
      if (c == ']') in_class = false;
    } else if (c == '[') {
      in_class = true;
      if (i + 1 < pattern.size() && pattern[i + 1] == '^') {
        out += '^';
        out += kSurrogates;
        ++i;
      }
      if (i + 1 < pattern.size() && pattern[i + 1] == ']') out += pattern[++i];  // "[]": literal
    }
  }
  return out;
}

}  // namespace plinth::grammar
