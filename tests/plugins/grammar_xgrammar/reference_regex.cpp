#include "reference_regex.hpp"

#include <algorithm>
#include <stdexcept>

namespace plinth::grammar::testing {
namespace {

constexpr uint32_t kMaxCodePoint = 0x10FFFF;
using Ranges = std::vector<std::pair<uint32_t, uint32_t>>;

Ranges complement(Ranges r) {
  std::sort(r.begin(), r.end());
  Ranges out;
  uint32_t next = 0;
  for (const auto& [lo, hi] : r) {
    if (lo > next) out.emplace_back(next, lo - 1);
    next = std::max(next, hi + 1);
  }
  if (next <= kMaxCodePoint) out.emplace_back(next, kMaxCodePoint);
  return out;
}

Ranges digits() {
  return {{'0', '9'}};
}
Ranges word() {
  return {{'0', '9'}, {'A', 'Z'}, {'_', '_'}, {'a', 'z'}};
}
/// ECMAScript's WhiteSpace and LineTerminator.
Ranges space() {
  return {{9, 13},          {32, 32},         {0xA0, 0xA0},     {0x1680, 0x1680}, {0x2000, 0x200A},
          {0x2028, 0x2029}, {0x202F, 0x202F}, {0x205F, 0x205F}, {0x3000, 0x3000}, {0xFEFF, 0xFEFF}};
}

std::u32string decode_pattern(std::string_view s) {
  std::u32string out;
  for (size_t i = 0; i < s.size();) {
    const auto b = static_cast<unsigned char>(s[i]);
    int n = b < 0x80 ? 1 : b >= 0xF0 ? 4 : b >= 0xE0 ? 3 : 2;
    uint32_t cp = n == 1 ? b : n == 2 ? (b & 0x1Fu) : n == 3 ? (b & 0x0Fu) : (b & 0x07u);
    if (i + static_cast<size_t>(n) > s.size()) throw std::invalid_argument("pattern: bad UTF-8");
    for (int k = 1; k < n; ++k) cp = (cp << 6) | (static_cast<unsigned char>(s[i + k]) & 0x3Fu);
    out.push_back(cp);
    i += static_cast<size_t>(n);
  }
  return out;
}

}  // namespace

ReferenceRegex::ReferenceRegex(std::string_view pattern) : pattern_(decode_pattern(pattern)) {
  Frag f = parse_alt();
  if (pos_ != pattern_.size()) throw std::invalid_argument("pattern: unbalanced ')'");
  start_ = f.start;
  accept_ = f.end;
  // live: the states from which the accepting state is reachable (reverse search)
  std::vector<std::vector<int>> rev(states_.size());
  for (size_t s = 0; s < states_.size(); ++s) {
    if (states_[s].next >= 0)
      rev[static_cast<size_t>(states_[s].next)].push_back(static_cast<int>(s));
    for (int e : states_[s].eps) rev[static_cast<size_t>(e)].push_back(static_cast<int>(s));
  }
  live_.assign(states_.size(), 0);
  std::vector<int> stack = {accept_};
  live_[static_cast<size_t>(accept_)] = 1;
  while (!stack.empty()) {
    const int s = stack.back();
    stack.pop_back();
    for (int p : rev[static_cast<size_t>(s)]) {
      if (!live_[static_cast<size_t>(p)]) {
        live_[static_cast<size_t>(p)] = 1;
        stack.push_back(p);
      }
    }
  }
}

int ReferenceRegex::add() {
  states_.emplace_back();
  return static_cast<int>(states_.size()) - 1;
}

ReferenceRegex::Frag ReferenceRegex::parse_alt() {
  Frag f = parse_seq();
  std::vector<Frag> alts = {f};
  while (pos_ < pattern_.size() && pattern_[pos_] == U'|') {
    ++pos_;
    alts.push_back(parse_seq());
  }
  if (alts.size() == 1) return f;
  const int s = add(), e = add();
  for (const Frag& a : alts) {
    states_[static_cast<size_t>(s)].eps.push_back(a.start);
    states_[static_cast<size_t>(a.end)].eps.push_back(e);
  }
  return {s, e};
}

int ReferenceRegex::parse_count(size_t& p) const {
  int v = -1;
  while (p < pattern_.size() && pattern_[p] >= U'0' && pattern_[p] <= U'9') {
    v = (v < 0 ? 0 : v) * 10 + static_cast<int>(pattern_[p] - U'0');
    if (v > 1000) throw std::invalid_argument("pattern: repetition over 1000");
    ++p;
  }
  return v;
}

bool ReferenceRegex::parse_quantifier(int& lo, int& hi) {
  if (pos_ >= pattern_.size()) return false;
  const char32_t q = pattern_[pos_];
  if (q == U'*' || q == U'+' || q == U'?') {
    lo = q == U'+' ? 1 : 0;
    hi = q == U'?' ? 1 : -1;
    ++pos_;
  } else if (q == U'{') {
    size_t p = pos_ + 1;
    lo = parse_count(p);
    if (lo < 0) throw std::invalid_argument("pattern: '{' without a count");
    hi = lo;
    if (p < pattern_.size() && pattern_[p] == U',') {
      ++p;
      hi = parse_count(p);  // -1: unbounded
    }
    if (p >= pattern_.size() || pattern_[p] != U'}') {
      throw std::invalid_argument("pattern: unterminated {n,m}");
    }
    if (hi >= 0 && hi < lo) throw std::invalid_argument("pattern: {n,m} with m < n");
    pos_ = p + 1;
  } else {
    return false;
  }
  if (pos_ < pattern_.size() && pattern_[pos_] == U'?') ++pos_;  // lazy: same language
  return true;
}

ReferenceRegex::Frag ReferenceRegex::parse_seq() {
  const int s = add();
  Frag cur{s, s};
  while (pos_ < pattern_.size() && pattern_[pos_] != U'|' && pattern_[pos_] != U')') {
    const int first = static_cast<int>(states_.size());
    Frag atom = parse_atom();
    int lo = 0, hi = 0;
    if (parse_quantifier(lo, hi)) {
      atom.lo = first;
      atom.hi = static_cast<int>(states_.size()) - 1;
      atom = repeat(atom, lo, hi);
    }
    states_[static_cast<size_t>(cur.end)].eps.push_back(atom.start);
    cur.end = atom.end;
  }
  return cur;
}

ReferenceRegex::Frag ReferenceRegex::ranges_frag(Ranges ranges) {
  const int s = add(), e = add();
  states_[static_cast<size_t>(s)].ranges = std::move(ranges);
  states_[static_cast<size_t>(s)].next = e;
  return {s, e};
}

uint32_t ReferenceRegex::next_code_point() {
  if (pos_ >= pattern_.size()) throw std::invalid_argument("pattern: ends early");
  return pattern_[pos_++];
}

Ranges ReferenceRegex::escape_ranges(bool in_class) {
  const uint32_t c = next_code_point();
  auto hex = [&](int n) {
    uint32_t v = 0;
    for (int i = 0; i < n; ++i) {
      const uint32_t h = next_code_point();
      if (h >= '0' && h <= '9') {
        v = v * 16 + (h - '0');
      } else if ((h | 0x20u) >= 'a' && (h | 0x20u) <= 'f') {
        v = v * 16 + ((h | 0x20u) - 'a' + 10);
      } else {
        throw std::invalid_argument("pattern: bad hex escape");
      }
    }
    return v;
  };
  switch (c) {
    case 'd':
      return digits();
    case 'D':
      return complement(digits());
    case 'w':
      return word();
    case 'W':
      return complement(word());
    case 's':
      return space();
    case 'S':
      return complement(space());
    case 'n':
      return {{10, 10}};
    case 'r':
      return {{13, 13}};
    case 't':
      return {{9, 9}};
    case 'f':
      return {{12, 12}};
    case 'v':
      return {{11, 11}};
    case '0':
      return {{0, 0}};
    case 'x': {
      const uint32_t v = hex(2);
      return {{v, v}};
    }
    case 'u': {
      const uint32_t v = hex(4);
      return {{v, v}};
    }
    case 'b':
      if (in_class) return {{8, 8}};
      throw std::invalid_argument("pattern: \\b (word boundary) is not supported");
    default:
      break;
  }
  if ((c >= '1' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')) {
    throw std::invalid_argument("pattern: unsupported escape");
  }
  return {{c, c}};  // an escaped punctuation character stands for itself
}

ReferenceRegex::Frag ReferenceRegex::parse_class() {
  bool negate = false;
  if (pos_ < pattern_.size() && pattern_[pos_] == U'^') {
    negate = true;
    ++pos_;
  }
  Ranges ranges;
  while (true) {
    if (pos_ >= pattern_.size()) throw std::invalid_argument("pattern: unterminated class");
    if (pattern_[pos_] == U']') {  // "[]" is the empty class, as in ECMAScript
      ++pos_;
      break;
    }
    Ranges item;
    if (pattern_[pos_] == U'\\') {
      ++pos_;
      item = escape_ranges(true);
    } else {
      const uint32_t c = next_code_point();
      item = {{c, c}};
    }
    if (item.size() == 1 && item[0].first == item[0].second && pos_ + 1 < pattern_.size() &&
        pattern_[pos_] == U'-' && pattern_[pos_ + 1] != U']') {
      ++pos_;
      Ranges to;
      if (pattern_[pos_] == U'\\') {
        ++pos_;
        to = escape_ranges(true);
      } else {
        const uint32_t c = next_code_point();
        to = {{c, c}};
      }
      if (to.size() != 1 || to[0].first != to[0].second || to[0].first < item[0].first) {
        throw std::invalid_argument("pattern: bad class range");
      }
      item = {{item[0].first, to[0].first}};
    }
    ranges.insert(ranges.end(), item.begin(), item.end());
  }
  return ranges_frag(negate ? complement(ranges) : ranges);
}

ReferenceRegex::Frag ReferenceRegex::parse_atom() {
  const uint32_t c = next_code_point();
  switch (c) {
    case '(': {
      if (pos_ < pattern_.size() && pattern_[pos_] == U'?') {
        if (pos_ + 1 < pattern_.size() && pattern_[pos_ + 1] == U':') {
          pos_ += 2;
        } else {
          throw std::invalid_argument("pattern: lookaround is not supported");
        }
      }
      Frag f = parse_alt();
      if (pos_ >= pattern_.size() || pattern_[pos_] != U')') {
        throw std::invalid_argument("pattern: unbalanced '('");
      }
      ++pos_;
      return f;
    }
    case '[':
      return parse_class();
    case '.':
      return ranges_frag({{0, 9}, {11, 12}, {14, 0x2027}, {0x202A, kMaxCodePoint}});
    case '\\':
      return ranges_frag(escape_ranges(false));
    case '^':
      if (pos_ != 1) throw std::invalid_argument("pattern: '^' inside");
      return parse_seq_empty();
    case '$':
      if (pos_ != pattern_.size()) throw std::invalid_argument("pattern: '$' inside");
      return parse_seq_empty();
    case '*':
    case '+':
    case '?':
    case '{':
    case '}':
    case ']':
      throw std::invalid_argument("pattern: a quantifier or bracket without an atom");
    default:
      return ranges_frag({{c, c}});
  }
}

ReferenceRegex::Frag ReferenceRegex::parse_seq_empty() {
  const int s = add();
  return {s, s};
}

ReferenceRegex::Frag ReferenceRegex::copy(const Frag& f) {
  const int offset = static_cast<int>(states_.size()) - f.lo;
  for (int s = f.lo; s <= f.hi; ++s) {
    State st = states_[static_cast<size_t>(s)];
    if (st.next >= 0) st.next += offset;
    for (int& e : st.eps) e += offset;
    states_.push_back(std::move(st));
  }
  return {f.start + offset, f.end + offset, f.lo + offset, f.hi + offset};
}

ReferenceRegex::Frag ReferenceRegex::repeat(const Frag& f, int lo, int hi) {
  // All copies come from the pristine fragment, before any of them is linked.
  const int needed = lo + (hi < 0 ? 1 : hi - lo);
  const int copies = std::max(0, needed - 1);
  std::vector<Frag> parts = {f};
  for (int i = 0; i < copies; ++i) parts.push_back(copy(f));
  const int s = add();
  Frag out{s, s};
  size_t next = 0;
  auto link = [&](int to) { states_[static_cast<size_t>(out.end)].eps.push_back(to); };
  for (int i = 0; i < lo; ++i) {
    const Frag& p = parts[next++];
    link(p.start);
    out.end = p.end;
  }
  if (hi < 0) {
    const Frag& p = parts[next++];
    const int loop = add();
    link(loop);
    states_[static_cast<size_t>(loop)].eps.push_back(p.start);
    states_[static_cast<size_t>(p.end)].eps.push_back(loop);
    out.end = loop;
  } else {
    for (int i = lo; i < hi; ++i) {
      const Frag& p = parts[next++];
      const int e = add();
      link(p.start);
      states_[static_cast<size_t>(out.end)].eps.push_back(e);
      states_[static_cast<size_t>(p.end)].eps.push_back(e);
      out.end = e;
    }
  }
  return out;
}

void ReferenceRegex::closure(std::vector<char>& set) const {
  std::vector<int> stack;
  for (size_t s = 0; s < set.size(); ++s) {
    if (set[s]) stack.push_back(static_cast<int>(s));
  }
  while (!stack.empty()) {
    const int s = stack.back();
    stack.pop_back();
    for (int e : states_[static_cast<size_t>(s)].eps) {
      if (!set[static_cast<size_t>(e)]) {
        set[static_cast<size_t>(e)] = 1;
        stack.push_back(e);
      }
    }
  }
}

namespace {

/// One UTF-8 sequence at bytes[i]: its length n (0: malformed lead byte), the bytes present
/// (`have` < n: unfinished at the end) and the code point bits read so far.
struct Utf8Step {
  int n = 0;
  size_t have = 0;
  uint32_t cp = 0;
  bool bad = false;
};

Utf8Step decode_step(std::string_view bytes, size_t i) {
  Utf8Step u;
  const auto b = static_cast<unsigned char>(bytes[i]);
  if (b < 0x80) {
    u.n = 1, u.cp = b;
  } else if (b >= 0xC2 && b <= 0xDF) {
    u.n = 2, u.cp = b & 0x1Fu;
  } else if (b >= 0xE0 && b <= 0xEF) {
    u.n = 3, u.cp = b & 0x0Fu;
  } else if (b >= 0xF0 && b <= 0xF4) {
    u.n = 4, u.cp = b & 0x07u;
  } else {
    u.bad = true;
    return u;
  }
  u.have = std::min(static_cast<size_t>(u.n), bytes.size() - i);
  for (size_t k = 1; k < u.have; ++k) {
    const auto c = static_cast<unsigned char>(bytes[i + k]);
    if ((c & 0xC0u) != 0x80u) {
      u.bad = true;
      return u;
    }
    u.cp = (u.cp << 6) | (c & 0x3Fu);
  }
  return u;
}

}  // namespace

bool ReferenceRegex::step(std::vector<char>& set, uint32_t cp) const {
  std::vector<char> next(states_.size(), 0);
  bool any = false;
  for (size_t s = 0; s < set.size(); ++s) {
    if (!set[s]) continue;
    const State& st = states_[s];
    for (const auto& [a, z] : st.ranges) {
      if (cp >= a && cp <= z) {
        next[static_cast<size_t>(st.next)] = 1;
        any = true;
        break;
      }
    }
  }
  if (!any) return false;
  closure(next);
  set = std::move(next);
  return true;
}

std::vector<char> ReferenceRegex::run(std::string_view bytes, uint32_t& lo, uint32_t& hi,
                                      bool& bad) const {
  std::vector<char> set(states_.size(), 0);
  set[static_cast<size_t>(start_)] = 1;
  closure(set);
  lo = 1, hi = 0, bad = false;
  for (size_t i = 0; i < bytes.size();) {
    const Utf8Step u = decode_step(bytes, i);
    if (u.bad) {
      bad = true;
      return {};
    }
    // The smallest code point an n-byte sequence may encode (shorter forms are overlong).
    const uint32_t least = u.n == 1 ? 0 : u.n == 2 ? 0x80 : u.n == 3 ? 0x800 : 0x10000;
    if (u.have < static_cast<size_t>(u.n)) {  // unfinished: the code points it can still become
      const auto rest = static_cast<uint32_t>(6 * (static_cast<size_t>(u.n) - u.have));
      lo = std::max(u.cp << rest, least);
      hi = std::min((u.cp << rest) | ((1u << rest) - 1), kMaxCodePoint);
      bad = lo > hi;
      return bad ? std::vector<char>{} : set;
    }
    if (u.cp < least || u.cp > kMaxCodePoint || (u.cp >= 0xD800 && u.cp <= 0xDFFF)) {
      bad = true;
      return {};
    }
    if (!step(set, u.cp)) return {};
    i += static_cast<size_t>(u.n);
  }
  return set;
}

bool ReferenceRegex::viable(std::string_view bytes) const {
  uint32_t lo = 0, hi = 0;
  bool bad = false;
  const std::vector<char> set = run(bytes, lo, hi, bad);
  if (bad || set.empty()) return false;
  for (size_t s = 0; s < set.size(); ++s) {
    if (!set[s] || !live_[s]) continue;
    if (lo > hi) return true;  // no unfinished tail: a live state is enough
    const State& st = states_[s];
    if (st.next < 0 || !live_[static_cast<size_t>(st.next)]) continue;
    for (const auto& [a, z] : st.ranges) {
      if (a <= hi && z >= lo) return true;
    }
  }
  return false;
}

bool ReferenceRegex::complete(std::string_view bytes) const {
  uint32_t lo = 0, hi = 0;
  bool bad = false;
  const std::vector<char> set = run(bytes, lo, hi, bad);
  return !bad && lo > hi && !set.empty() && set[static_cast<size_t>(accept_)] != 0;
}

}  // namespace plinth::grammar::testing
