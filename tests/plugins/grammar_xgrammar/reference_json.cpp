#include "reference_json.hpp"

#include <algorithm>
#include <cstdint>
#include <set>
#include <utility>

namespace plinth::grammar::testing {
namespace {

using json = nlohmann::ordered_json;
__extension__ typedef __int128 i128;  // exact scaled bounds

constexpr int kMaxDepth = 200;
constexpr int kFractionDigits = 6;  // a bounded number's fraction digits at most

/// 10^36: scaled values at or beyond it count as "unbounded" (saturated).
i128 saturation() {
  i128 v = 1;
  for (int i = 0; i < 36; ++i) v *= 10;
  return v;
}

i128 pow10(int e) {
  i128 v = 1;
  for (int i = 0; i < e; ++i) v = v >= saturation() ? v : v * 10;
  return std::min(v, saturation());
}

i128 clamp(i128 v) {
  return std::clamp(v, -saturation(), saturation());
}

/// Decimal digits as an integer, saturated.
i128 digits_value(std::string_view d) {
  i128 v = 0;
  for (char c : d) {
    v = v * 10 + (c - '0');
    if (v >= saturation()) return saturation();
  }
  return v;
}

/// A JSON number (as nlohmann dumps it: "12", "-1.5", "1e-05", "1.5e+20") times 10^scale, rounded
/// up (ceil) or down.
i128 scaled_bound(const json& v, int scale, bool ceil) {
  const std::string text = v.dump();
  bool neg = false;
  std::string digits;
  int exp = 0;
  size_t i = 0;
  if (i < text.size() && text[i] == '-') {
    neg = true;
    ++i;
  }
  bool frac = false;
  for (; i < text.size() && text[i] != 'e' && text[i] != 'E'; ++i) {
    if (text[i] == '.') {
      frac = true;
      continue;
    }
    digits += text[i];
    if (frac) --exp;
  }
  if (i < text.size()) exp += std::stoi(text.substr(i + 1));
  exp += scale;
  // magnitude = digits * 10^exp; floor/ceil of the signed value.
  i128 mag;
  bool inexact = false;
  if (exp >= 0) {
    mag = digits_value(digits);
    for (int e = 0; e < exp && mag < saturation(); ++e) mag *= 10;
    mag = std::min(mag, saturation());
  } else {
    const size_t cut = static_cast<size_t>(-exp);
    const std::string whole = digits.size() > cut ? digits.substr(0, digits.size() - cut) : "";
    const std::string rest = digits.size() > cut ? digits.substr(digits.size() - cut) : digits;
    mag = digits_value(whole);
    inexact = rest.find_first_not_of('0') != std::string::npos;
  }
  i128 value = neg ? -mag : mag;
  if (inexact) {
    // value is truncated towards zero; adjust to floor / ceil.
    if (ceil && !neg) value += 1;
    if (!ceil && neg) value -= 1;
  }
  return value;
}

/// The bounds of a number schema on the grid of 10^-scale: [lo, hi] (saturated when absent),
/// and whether the bound as written is below zero.
struct Bounds {
  i128 lo, hi;
  bool bounded = false;
  bool lo_negative = true;  // no lower bound, or one below zero
};

Bounds bounds_of(const json& s, int scale) {
  Bounds b{-saturation(), saturation()};
  auto tighten_lo = [&](const char* key, bool exclusive) {
    auto it = s.find(key);
    if (it == s.end() || !it->is_number()) return;
    b.bounded = true;
    const i128 v = exclusive ? scaled_bound(*it, scale, false) + 1 : scaled_bound(*it, scale, true);
    b.lo = std::max(b.lo, v);
    b.lo_negative = b.lo_negative && it->get<double>() < 0;
  };
  auto tighten_hi = [&](const char* key, bool exclusive) {
    auto it = s.find(key);
    if (it == s.end() || !it->is_number()) return;
    b.bounded = true;
    const i128 v = exclusive ? scaled_bound(*it, scale, true) - 1 : scaled_bound(*it, scale, false);
    b.hi = std::min(b.hi, v);
  };
  tighten_lo("minimum", false);
  tighten_lo("exclusiveMinimum", true);
  tighten_hi("maximum", false);
  tighten_hi("exclusiveMaximum", true);
  return b;
}

bool meets(i128 a, i128 b, const Bounds& bd) {
  return a <= bd.hi && b >= bd.lo && a <= b;
}

/// A number's text split: [-] int [. frac] [e exp]; false when `t` is no prefix of a JSON number.
struct NumText {
  bool neg = false, dot = false, exp = false;
  std::string intd, frac, expd;  // expd with its sign, if any
};

bool split_number(std::string_view t, NumText& n) {
  size_t i = 0;
  if (i < t.size() && t[i] == '-') {
    n.neg = true;
    ++i;
  }
  while (i < t.size() && t[i] >= '0' && t[i] <= '9') n.intd += t[i++];
  if (n.intd.size() > 1 && n.intd[0] == '0') return false;
  if (i < t.size() && t[i] == '.') {
    if (n.intd.empty()) return false;
    n.dot = true;
    ++i;
    while (i < t.size() && t[i] >= '0' && t[i] <= '9') n.frac += t[i++];
  }
  if (i < t.size() && (t[i] == 'e' || t[i] == 'E')) {
    if (n.intd.empty() || (n.dot && n.frac.empty())) return false;
    n.exp = true;
    ++i;
    if (i < t.size() && (t[i] == '+' || t[i] == '-')) n.expd += t[i++];
    while (i < t.size() && t[i] >= '0' && t[i] <= '9') n.expd += t[i++];
  }
  return i == t.size();
}

/// The value of a (bounded-form) number text on the 10^-scale grid.
i128 grid_value(const NumText& n, int scale) {
  std::string frac = n.frac;
  frac.resize(static_cast<size_t>(scale), '0');
  const i128 whole = digits_value(n.intd);  // saturated: scale it only while it cannot overflow
  const i128 v = whole >= saturation() / pow10(scale)
                     ? saturation()
                     : clamp(whole * pow10(scale) + digits_value(frac));
  return n.neg ? -v : v;
}

/// Decodes one UTF-8 code point at `p`: its length; 0 when malformed; -1 when the input ends
/// inside a sequence that is well-formed so far.
int utf8(std::string_view in, size_t p, uint32_t& cp) {
  const auto b0 = static_cast<unsigned char>(in[p]);
  int len;
  unsigned char lo = 0x80, hi = 0xBF;
  if (b0 < 0x80) {
    cp = b0;
    return 1;
  }
  if (b0 >= 0xC2 && b0 <= 0xDF) {
    len = 2;
    cp = b0 & 0x1Fu;
  } else if (b0 >= 0xE0 && b0 <= 0xEF) {
    len = 3;
    cp = b0 & 0x0Fu;
    if (b0 == 0xE0) lo = 0xA0;
    if (b0 == 0xED) hi = 0x9F;
  } else if (b0 >= 0xF0 && b0 <= 0xF4) {
    len = 4;
    cp = b0 & 0x07u;
    if (b0 == 0xF0) lo = 0x90;
    if (b0 == 0xF4) hi = 0x8F;
  } else {
    return 0;
  }
  for (int i = 1; i < len; ++i) {
    if (p + static_cast<size_t>(i) >= in.size()) return -1;
    const auto b = static_cast<unsigned char>(in[p + static_cast<size_t>(i)]);
    if (i == 1 ? (b < lo || b > hi) : (b < 0x80 || b > 0xBF)) return 0;
    cp = (cp << 6) | (b & 0x3Fu);
  }
  return len;
}

bool is_ws(char c) {
  return c == ' ' || c == '\n' || c == '\r' || c == '\t';
}

bool is_hex(char c) {
  return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}

/// The engine's number forms (see the header); false when `n` can never be one.
bool number_form(const NumText& n, bool integer, const Bounds& bd) {
  const bool bounded_form = integer || bd.bounded;
  if (bounded_form && (n.exp || (integer && n.dot))) return false;
  if (bounded_form && n.frac.size() > static_cast<size_t>(kFractionDigits)) return false;
  const bool neg_zero = n.neg && n.intd == "0";
  if (integer && neg_zero) return false;
  return !(neg_zero && bd.bounded && !bd.lo_negative);
}

/// `n` (in an allowed form) is a whole number of the schema.
bool number_complete(const NumText& n, bool integer, const Bounds& bd) {
  const bool syntax = !n.intd.empty() && (!n.dot || !n.frac.empty()) &&
                      (!n.exp || (!n.expd.empty() && n.expd != "+" && n.expd != "-"));
  if (!syntax) return false;
  if (!bd.bounded) return true;
  if (n.neg && n.intd == "0" && !n.dot) return false;  // "-0" never with a bound
  const i128 v = grid_value(n, integer ? 0 : kFractionDigits);
  return v >= bd.lo && v <= bd.hi;
}

/// Some continuation of the (unfinished) number `n` is in bounds: the intervals of the header.
bool number_prefix_viable(const NumText& n, bool integer, const Bounds& bd) {
  if (!bd.bounded) return true;
  const int scale = integer ? 0 : kFractionDigits;
  if (n.intd.empty()) {  // "-" alone
    if (meets(-saturation(), -1, bd)) return true;
    return !integer && bd.lo_negative && meets(0, 0, bd);
  }
  const auto interval_meets = [&](i128 a, i128 b) {  // magnitudes [a, b], mirrored when negative
    return n.neg ? meets(-b, -a, bd) : meets(a, b, bd);
  };
  const i128 unit = pow10(scale);
  if (n.dot) {
    if (n.frac.size() >= static_cast<size_t>(kFractionDigits)) return false;
    const i128 a = n.neg ? -grid_value(n, scale) : grid_value(n, scale);
    return interval_meets(a, a + pow10(kFractionDigits - static_cast<int>(n.frac.size())) - 1);
  }
  if (n.intd == "0") return interval_meets(0, unit - 1);
  const i128 d = digits_value(n.intd);
  for (int e = 0;; ++e) {
    const i128 a = clamp(d * pow10(e) * unit);
    const i128 b = clamp((d + 1) * pow10(e) * unit - 1);
    if (interval_meets(a, b)) return true;
    if (a >= saturation() / 10) return false;
  }
}

/// The length of the JSON escape at in[q] ('\\'): > 0; 0 when invalid; -1 when the input ends
/// inside it.
int escape_length(std::string_view in, size_t q) {
  if (q + 1 >= in.size()) return -1;
  const char e = in[q + 1];
  if (e != 'u') return std::string_view("\"\\/bfnrt").find(e) != std::string_view::npos ? 2 : 0;
  for (size_t i = 2; i < 6; ++i) {
    if (q + i >= in.size()) return -1;
    if (!is_hex(in[q + i])) return 0;
  }
  return 6;
}

/// A length- or pattern-constrained string that ran out of input after `count` characters
/// (`content`: its bytes so far) can still be completed.
bool constrained_tail_viable(bool prefix, size_t count, size_t max, const ReferenceRegex* re,
                             std::string_view content) {
  if (!prefix || count > max) return false;
  return re == nullptr || re->viable(content);
}

bool has_object_keywords(const json& s) {
  return s.contains("properties") || s.contains("required") || s.contains("additionalProperties");
}

const char* kUuid = "^[0-9A-Fa-f]{8}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{12}$";

/// Keywords the reference does not model (the rewritten subset keeps them only in shapes the
/// reference leaves to XGrammar alone).
const std::set<std::string>& unsupported_keywords() {
  static const std::set<std::string> k = {"patternProperties",
                                          "additionalItems",
                                          "not",
                                          "if",
                                          "then",
                                          "else",
                                          "dependencies",
                                          "dependentRequired",
                                          "dependentSchemas",
                                          "minProperties",
                                          "maxProperties",
                                          "uniqueItems",
                                          "contains",
                                          "propertyNames",
                                          "multipleOf",
                                          "unevaluatedProperties",
                                          "unevaluatedItems"};
  return k;
}

}  // namespace

ReferenceJson::ReferenceJson(std::string_view schema, Options options)
    : root_(json::parse(schema)), max_ws_(options.max_ws) {
  check(root_, "");
}

void ReferenceJson::check(const json& s, const std::string& ptr) {
  if (s.is_boolean()) return;
  if (!s.is_object()) throw Unsupported(ptr + ": not a schema");
  for (const auto& [key, v] : s.items()) {
    if (unsupported_keywords().count(key) != 0) throw Unsupported(ptr + "/" + key);
    if (key == "format" && v != "uuid") throw Unsupported(ptr + "/format");
    if (key == "allOf" && v.size() != 1) throw Unsupported(ptr + "/allOf");
    if (key == "$ref") (void)resolve(v.get<std::string>());
    if (key == "pattern") add_regex(v.get<std::string>(), ptr + "/pattern");
    if (key == "format") add_regex(kUuid, ptr + "/format");
    check_children(key, v, ptr);
  }
}

void ReferenceJson::add_regex(const std::string& pattern, const std::string& ptr) {
  if (regexes_.count(pattern) != 0) return;
  try {
    regexes_[pattern] = std::make_shared<ReferenceRegex>(pattern);
  } catch (const std::invalid_argument& e) {
    throw Unsupported(ptr + ": " + e.what());
  }
}

void ReferenceJson::check_children(const std::string& key, const json& v, const std::string& ptr) {
  const bool schema_map = key == "properties" || key == "$defs" || key == "definitions";
  const bool schema_list = key == "anyOf" || key == "oneOf" || key == "allOf" ||
                           key == "prefixItems" || (key == "items" && v.is_array());
  const bool one_schema = key == "additionalProperties" || (key == "items" && !v.is_array());
  if (schema_map) {
    for (const auto& [name, sub] : v.items()) check(sub, ptr + "/" + key + "/" + name);
  } else if (schema_list) {
    if (key == "items") throw Unsupported(ptr + "/items (a tuple)");
    for (size_t i = 0; i < v.size(); ++i) check(v[i], ptr + "/" + key + "/" + std::to_string(i));
  } else if (one_schema) {
    check(v, ptr + "/" + key);
  }
}

const ReferenceJson::json& ReferenceJson::resolve(const std::string& ref) const {
  if (ref.empty() || ref[0] != '#') throw Unsupported("$ref " + ref);
  try {
    return root_.at(json::json_pointer(ref.substr(1)));
  } catch (const json::exception&) {
    throw Unsupported("$ref " + ref + " does not resolve");
  }
}

bool ReferenceJson::viable(std::string_view bytes) const {
  const Run r{bytes, true};
  return value(r, root_, 0, [&](size_t p) { return p == bytes.size(); });
}

bool ReferenceJson::complete(std::string_view bytes) const {
  const Run r{bytes, false};
  return value(r, root_, 0, [&](size_t p) { return p == bytes.size(); });
}

bool ReferenceJson::value(const Run& r, const json& s, size_t p, const K& k) const {
  struct Guard {
    int& d;
    explicit Guard(int& x) : d(++x) {}
    ~Guard() { --d; }
  } guard(r.depth);
  if (r.depth > kMaxDepth) return false;
  if (s.is_boolean()) return s.get<bool>() && any(r, p, k);
  if (auto ref = s.find("$ref"); ref != s.end()) {
    return value(r, resolve(ref->get<std::string>()), p, k);
  }
  if (auto c = s.find("const"); c != s.end()) return literal(r, c->dump(), p, k);
  if (auto e = s.find("enum"); e != s.end()) {
    return std::any_of(e->begin(), e->end(),
                       [&](const json& v) { return literal(r, v.dump(), p, k); });
  }
  for (const char* comb : {"anyOf", "oneOf", "allOf"}) {
    if (auto a = s.find(comb); a != s.end()) {
      return std::any_of(a->begin(), a->end(),
                         [&](const json& alt) { return value(r, alt, p, k); });
    }
  }
  auto t = s.find("type");
  if (t == s.end()) {
    if (has_object_keywords(s)) return object(r, s, p, k);
    return any(r, p, k);
  }
  if (t->is_string()) return typed(r, s, t->get<std::string>(), p, k);
  return std::any_of(t->begin(), t->end(),
                     [&](const json& name) { return typed(r, s, name.get<std::string>(), p, k); });
}

bool ReferenceJson::typed(const Run& r, const json& s, const std::string& type, size_t p,
                          const K& k) const {
  if (type == "string") return string(r, s, p, k);
  if (type == "integer") return number(r, s, true, p, k);
  if (type == "number") return number(r, s, false, p, k);
  if (type == "boolean") return literal(r, "true", p, k) || literal(r, "false", p, k);
  if (type == "null") return literal(r, "null", p, k);
  if (type == "object") return object(r, s, p, k);
  if (type == "array") return array(r, s, p, k);
  throw Unsupported("type " + type);
}

bool ReferenceJson::any(const Run& r, size_t p, const K& k) const {
  static const json empty = json::object();
  return plain_string(r, p, [&](size_t q, std::string_view) { return k(q); }) ||
         number(r, empty, false, p, k) || literal(r, "true", p, k) || literal(r, "false", p, k) ||
         literal(r, "null", p, k) || array(r, empty, p, k) || object(r, empty, p, k);
}

bool ReferenceJson::ws(const Run& r, size_t p, const K& k) const {
  for (int c = 0; c <= max_ws_; ++c) {
    const size_t q = p + static_cast<size_t>(c);
    if (k(q)) return true;
    if (q >= r.in.size() || !is_ws(r.in[q])) return false;
  }
  return false;
}

bool ReferenceJson::literal(const Run& r, std::string_view lit, size_t p, const K& k) const {
  for (size_t i = 0; i < lit.size(); ++i) {
    if (p + i >= r.in.size()) return r.prefix;
    if (r.in[p + i] != lit[i]) return false;
  }
  return k(p + lit.size());
}

bool ReferenceJson::object(const Run& r, const json& s, size_t p, const K& k) const {
  static const json empty = json::object();
  const json& props = s.contains("properties") ? s.at("properties") : empty;
  std::set<std::string> required;
  if (auto q = s.find("required"); q != s.end()) {
    for (const auto& n : *q) required.insert(n.get<std::string>());
  }
  const json addl = s.contains("additionalProperties") ? s.at("additionalProperties") : json(true);
  const bool addl_allowed = !(addl.is_boolean() && !addl.get<bool>());
  std::vector<std::string> names;  // as written, with quotes
  std::vector<const json*> schemas;
  std::vector<bool> req;
  for (const auto& [name, sub] : props.items()) {
    names.push_back(json(name).dump());
    schemas.push_back(&sub);
    req.push_back(required.count(name) != 0);
  }
  const size_t n = names.size();
  const auto close = [&](size_t q) {
    return ws(r, q, [&](size_t q2) { return literal(r, "}", q2, k); });
  };
  // One member: [ws "," ws] key ws ":" ws value, then `next`.
  const auto member = [&](size_t q, bool first, const std::function<bool(size_t, const K&)>& key,
                          const json& vs, const K& next) {
    const K after_sep = [&](size_t q2) {
      return key(q2, [&](size_t q3) {
        return ws(r, q3, [&](size_t q4) {
          return literal(r, ":", q4, [&](size_t q5) {
            return ws(r, q5, [&](size_t q6) { return value(r, vs, q6, next); });
          });
        });
      });
    };
    if (first) return after_sep(q);
    return ws(r, q, [&](size_t q2) {
      return literal(r, ",", q2, [&](size_t q3) { return ws(r, q3, after_sep); });
    });
  };
  const auto addl_key = [&](size_t q, const K& next) {
    return plain_string(r, q, [&](size_t q2, std::string_view raw) {
      std::string written;
      written.reserve(raw.size() + 2);
      written.push_back('"');
      written.append(raw);
      written.push_back('"');
      if (std::find(names.begin(), names.end(), written) != names.end()) return false;
      return next(q2);
    });
  };
  // Members from listed index i on (`first`: none written yet).
  std::function<bool(size_t, size_t, bool)> members = [&](size_t i, size_t q, bool first) -> bool {
    for (size_t j = i; j < n; ++j) {
      const auto key = [&](size_t q2, const K& next) { return literal(r, names[j], q2, next); };
      if (member(q, first, key, *schemas[j], [&](size_t q2) { return members(j + 1, q2, false); }))
        return true;
      if (req[j]) return false;  // a required property cannot be skipped
    }
    if (!first && close(q)) return true;
    if (!addl_allowed) return false;
    return member(q, first, addl_key, addl, [&](size_t q2) { return members(n, q2, false); });
  };
  return literal(r, "{", p, [&](size_t q) {
    if (required.empty() && close(q)) return true;
    return ws(r, q, [&](size_t q2) { return members(0, q2, true); });
  });
}

bool ReferenceJson::array(const Run& r, const json& s, size_t p, const K& k) const {
  static const json any_schema = true;
  static const json empty = json::array();
  const json& prefix = s.contains("prefixItems") ? s.at("prefixItems") : empty;
  const json& items = s.contains("items") ? s.at("items") : any_schema;
  const size_t min = s.value("minItems", size_t{0});
  const size_t max = s.value("maxItems", SIZE_MAX);
  const auto item_schema = [&](size_t i) -> const json* {
    if (i < prefix.size()) return &prefix[i];
    if (items.is_boolean() && !items.get<bool>()) return nullptr;
    return &items;
  };
  const auto close = [&](size_t q) {
    return ws(r, q, [&](size_t q2) { return literal(r, "]", q2, k); });
  };
  // After `count` items at q.
  std::function<bool(size_t, size_t)> rest = [&](size_t count, size_t q) -> bool {
    if (count >= min && close(q)) return true;
    const json* is = item_schema(count);
    if (count >= max || is == nullptr) return false;
    return ws(r, q, [&](size_t q2) {
      return literal(r, ",", q2, [&](size_t q3) {
        return ws(r, q3, [&](size_t q4) {
          return value(r, *is, q4, [&](size_t q5) { return rest(count + 1, q5); });
        });
      });
    });
  };
  return literal(r, "[", p, [&](size_t q) {
    // Empty: one whitespace run; with prefixItems the engine's empty tuple has two ("[" ws
    // (item ...)? ws "]").
    if (min == 0 && !prefix.empty() && ws(r, q, close)) return true;
    if (min == 0 && close(q)) return true;
    const json* first = item_schema(0);
    if (max == 0 || first == nullptr) return false;
    return ws(r, q, [&](size_t q2) {
      return value(r, *first, q2, [&](size_t q3) { return rest(1, q3); });
    });
  });
}

bool ReferenceJson::plain_string(const Run& r, size_t p,
                                 const std::function<bool(size_t, std::string_view)>& k) const {
  const std::string_view in = r.in;
  if (p >= in.size()) return r.prefix;
  if (in[p] != '"') return false;
  size_t q = p + 1;
  while (true) {
    if (q >= in.size()) return r.prefix;
    const char c = in[q];
    if (c == '"') return k(q + 1, in.substr(p + 1, q - p - 1));
    if (c == '\\') {
      const int len = escape_length(in, q);
      if (len < 0) return r.prefix;
      if (len == 0) return false;
      q += static_cast<size_t>(len);
      continue;
    }
    uint32_t cp = 0;
    const int len = utf8(in, q, cp);
    if (len < 0) return r.prefix;
    if (len == 0 || cp < 0x20) return false;
    q += static_cast<size_t>(len);
  }
}

bool ReferenceJson::string(const Run& r, const json& s, size_t p, const K& k) const {
  const auto pattern = s.find("pattern");
  const bool uuid = s.contains("format");
  const bool lengths = s.contains("minLength") || s.contains("maxLength");
  if (pattern == s.end() && !uuid && !lengths) {
    return plain_string(r, p, [&](size_t q, std::string_view) { return k(q); });
  }
  const ReferenceRegex* re = nullptr;
  if (pattern != s.end()) re = regexes_.at(pattern->get<std::string>()).get();
  if (uuid) re = regexes_.at(kUuid).get();
  const size_t min = s.value("minLength", size_t{0});
  const size_t max = s.value("maxLength", SIZE_MAX);
  const std::string_view in = r.in;
  if (p >= in.size()) return r.prefix;
  if (in[p] != '"') return false;
  size_t q = p + 1, count = 0;
  while (true) {
    if (q >= in.size()) {  // ran out inside: the characters so far must leave a completion
      return constrained_tail_viable(r.prefix, count, max, re, in.substr(p + 1, q - p - 1));
    }
    const char c = in[q];
    if (c == '"') {
      const bool ok = count >= min && count <= max &&
                      (re == nullptr || re->complete(in.substr(p + 1, q - p - 1)));
      return ok && k(q + 1);
    }
    uint32_t cp = 0;
    const int len = utf8(in, q, cp);
    if (len < 0) return constrained_tail_viable(r.prefix, count + 1, max, re, in.substr(p + 1));
    if (len == 0 || cp < 0x20 || c == '\\') return false;
    q += static_cast<size_t>(len);
    ++count;
  }
}

bool ReferenceJson::number(const Run& r, const json& s, bool integer, size_t p, const K& k) const {
  const std::string_view in = r.in;
  if (p >= in.size()) return r.prefix;
  size_t q = p;
  while (q < in.size() && std::string_view("+-.eE0123456789").find(in[q]) != std::string_view::npos)
    ++q;
  if (q == p) return false;
  NumText n;
  if (!split_number(in.substr(p, q - p), n)) return false;
  const Bounds bd = bounds_of(s, integer ? 0 : kFractionDigits);
  if (!number_form(n, integer, bd)) return false;
  if (number_complete(n, integer, bd) && k(q)) return true;
  // The input ends inside the number: can it still become one in bounds?
  return q >= in.size() && r.prefix && number_prefix_viable(n, integer, bd);
}

}  // namespace plinth::grammar::testing
