#include "json_string_classes.hpp"

#include <string_view>

namespace plinth::grammar {

std::string json_string_classes(const std::string& ebnf) {
  // As XGrammar prints them: the length-limited string's character class, and its replacement.
  constexpr std::string_view kLengthClass = R"([^\"\\\r\n])";
  constexpr std::string_view kJsonClass = R"([^\0-\x1f\"\\])";
  constexpr std::string_view kNoSurrogates = R"(\ud800-\udfff)";
  std::string out;
  out.reserve(ebnf.size() + ebnf.size() / 8);
  bool in_literal = false;
  for (size_t i = 0; i < ebnf.size(); ++i) {
    const char c = ebnf[i];
    if (in_literal) {
      out += c;
      if (c == '\\' && i + 1 < ebnf.size()) {
        out += ebnf[++i];
      } else if (c == '"') {
        in_literal = false;
      }
      continue;
    }
    if (c == '"') {
      in_literal = true;
      out += c;
      continue;
    }
    if (c == '[' && i + 1 < ebnf.size() && ebnf[i + 1] == '^') {
      std::string_view cls(ebnf);
      cls.remove_prefix(i);
      if (cls.starts_with(kLengthClass)) {
        out += "[^";
        out += kNoSurrogates;
        out += kJsonClass.substr(2);
        i += kLengthClass.size() - 1;
        continue;
      }
      out += "[^";
      out += kNoSurrogates;
      ++i;
      // A class's own characters ('"' among them) are no literal: copy to its closing ']'.
      while (i + 1 < ebnf.size() && ebnf[i + 1] != ']') {
        out += ebnf[++i];
        if (ebnf[i] == '\\' && i + 1 < ebnf.size()) out += ebnf[++i];
      }
      continue;
    }
    if (c == '[') {
      // A positive class: copy it whole (a '"' inside it opens no literal).
      out += c;
      while (i + 1 < ebnf.size() && ebnf[i + 1] != ']') {
        out += ebnf[++i];
        if (ebnf[i] == '\\' && i + 1 < ebnf.size()) out += ebnf[++i];
      }
      continue;
    }
    out += c;
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
