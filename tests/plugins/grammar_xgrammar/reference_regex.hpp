#pragma once
// A slow reference matcher for regular expressions, written for the tests and independent of
// XGrammar: the pattern is parsed into a Thompson NFA over Unicode code points, and every question
// re-runs the NFA over the whole byte string from the start (UTF-8 decoded; an unfinished UTF-8
// sequence at the end is viable when some code point it can still become has a transition).
// The grammar plugin's masks are checked against it: a token is allowed after a prefix exactly
// when prefix + token is viable, and a stop token exactly when the prefix is complete.
//
// Syntax (ECMAScript's, as JSON Schema patterns use): literals, '.', classes [a-z] [^...] with
// escapes, \d \D \w \W \s \S, \n \r \t \f \v \xHH \uHHHH and escaped punctuation, groups (...)
// and (?:...), '|', quantifiers * + ? {n} {n,} {n,m} (a lazy '?' after them changes nothing
// here), '^' at the start and '$' at the end (the match is always the whole string).
// Throws std::invalid_argument for anything else.

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace plinth::grammar::testing {

class ReferenceRegex {
 public:
  explicit ReferenceRegex(std::string_view pattern);

  /// Some continuation of `bytes` matches the pattern in full.
  bool viable(std::string_view bytes) const;
  /// `bytes` matches the pattern in full.
  bool complete(std::string_view bytes) const;

 private:
  struct State {
    std::vector<std::pair<uint32_t, uint32_t>> ranges;  // code point ranges to `next`
    int next = -1;
    std::vector<int> eps;
  };
  struct Frag {
    int start, end;
    int lo = 0, hi = -1;  // the states [lo, hi] it was built of (for copies)
  };
  int add();
  Frag parse_alt();
  Frag parse_seq();
  /// A quantifier at pos_ (consumed): [lo, hi] (hi -1: unbounded); false when there is none.
  bool parse_quantifier(int& lo, int& hi);
  int parse_count(size_t& p) const;
  Frag parse_atom();
  Frag parse_class();
  Frag parse_seq_empty();
  Frag ranges_frag(std::vector<std::pair<uint32_t, uint32_t>> ranges);
  Frag copy(const Frag& f);
  Frag repeat(const Frag& f, int lo, int hi);
  std::vector<std::pair<uint32_t, uint32_t>> escape_ranges(bool in_class);
  uint32_t next_code_point();
  void closure(std::vector<char>& set) const;
  /// Advances the state set over one code point; false (set unchanged) when no state takes it.
  bool step(std::vector<char>& set, uint32_t cp) const;
  /// The states after `bytes`' complete code points (empty: dead), and the unfinished tail's
  /// possible code points [lo, hi] (lo > hi: no tail; `bad`: malformed UTF-8).
  std::vector<char> run(std::string_view bytes, uint32_t& lo, uint32_t& hi, bool& bad) const;

  std::u32string pattern_;
  size_t pos_ = 0;
  std::vector<State> states_;
  std::vector<char> live_;  // can reach the accepting state
  int start_ = 0, accept_ = 0;
};

}  // namespace plinth::grammar::testing
