#include "schema_eval.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <regex>
#include <string>
#include <string_view>

namespace plinth::grammar {
namespace {

using json = nlohmann::json;
using Verdict = std::optional<bool>;

constexpr int kMaxDepth = 64;

/// Keywords that assert nothing about the value.
constexpr std::array<std::string_view, 15> kAnnotations = {
    "title",     "description", "default",     "examples",         "$schema",
    "$id",       "id",          "$comment",    "deprecated",       "readOnly",
    "writeOnly", "$defs",       "definitions", "contentMediaType", "contentEncoding"};

bool is_annotation(std::string_view k) {
  return std::find(kAnnotations.begin(), kAnnotations.end(), k) != kAnnotations.end();
}

bool ascii(std::string_view s) {
  return std::all_of(s.begin(), s.end(),
                     [](char c) { return static_cast<unsigned char>(c) < 128; });
}

size_t code_points(std::string_view s) {
  return static_cast<size_t>(std::count_if(
      s.begin(), s.end(), [](char c) { return (static_cast<unsigned char>(c) & 0xC0) != 0x80; }));
}

/// An ECMAScript search of `pattern` in `s`; nullopt for non-ASCII text or a pattern std::regex
/// does not take.
Verdict search(const std::string& pattern, const std::string& s) {
  if (!ascii(pattern) || !ascii(s)) return std::nullopt;
  try {
    return std::regex_search(s, std::regex(pattern, std::regex::ECMAScript));
  } catch (const std::regex_error&) {
    return std::nullopt;
  }
}

class Evaluator {
 public:
  explicit Evaluator(const json& root) : root_(root) {}

  Verdict eval(const json& v, const json& s, int depth) {
    if (s.is_boolean()) return s.get<bool>();
    if (!s.is_object() || depth > kMaxDepth) return std::nullopt;
    if (auto r = s.find("$ref"); r != s.end()) return ref(v, s, *r, depth);
    bool all = true;
    for (const auto& [k, kv] : s.items()) {
      if (is_annotation(k)) continue;
      const Verdict one = keyword(v, s, k, kv, depth);
      if (!one.has_value()) return std::nullopt;
      all = all && *one;
    }
    return all;
  }

 private:
  Verdict ref(const json& v, const json& s, const json& r, int depth) {
    for (const auto& [k, unused] : s.items()) {
      if (k != "$ref" && !is_annotation(k)) return std::nullopt;
    }
    if (!r.is_string()) return std::nullopt;
    const std::string& p = r.get_ref<const std::string&>();
    if (p.empty() || p[0] != '#') return std::nullopt;
    try {
      return eval(v, root_.at(json::json_pointer(p.substr(1))), depth + 1);
    } catch (const std::exception&) {
      return std::nullopt;
    }
  }

  static Verdict has_type(const json& v, const json& t) {
    if (!t.is_string()) return std::nullopt;
    const std::string& n = t.get_ref<const std::string&>();
    if (n == "integer") {
      if (v.is_number_integer() || v.is_number_unsigned()) return true;
      if (v.is_number_float()) {
        const double d = v.get<double>();
        if (std::isfinite(d) && d == std::floor(d)) return std::nullopt;  // draft-dependent
        return false;
      }
      return false;
    }
    if (n == "number") return v.is_number();
    if (n == "string") return v.is_string();
    if (n == "boolean") return v.is_boolean();
    if (n == "null") return v.is_null();
    if (n == "array") return v.is_array();
    if (n == "object") return v.is_object();
    return std::nullopt;
  }

  static Verdict type(const json& v, const json& t) {
    if (!t.is_array()) return has_type(v, t);
    bool undecided = false;
    for (const auto& one : t) {
      const Verdict r = has_type(v, one);
      if (r == true) return true;
      undecided = undecided || !r.has_value();
    }
    return undecided ? Verdict() : Verdict(false);
  }

  /// Numbers: the bound keywords (draft-4 boolean exclusives modify minimum / maximum).
  static Verdict bound(const json& v, const json& s, const std::string& k, const json& kv) {
    if (!v.is_number()) return true;
    if (kv.is_boolean()) return true;  // draft 4: read with minimum / maximum
    if (!kv.is_number()) return std::nullopt;
    const auto x = v.get<long double>();
    const auto b = kv.get<long double>();
    if (k == "minimum" || k == "maximum") {
      const json* ex = nullptr;
      const char* exk = k == "minimum" ? "exclusiveMinimum" : "exclusiveMaximum";
      if (auto it = s.find(exk); it != s.end() && it->is_boolean()) ex = &*it;
      const bool strict = ex != nullptr && ex->get<bool>();
      if (k == "minimum") return strict ? x > b : x >= b;
      return strict ? x < b : x <= b;
    }
    return k == "exclusiveMinimum" ? x > b : x < b;
  }

  static Verdict multiple_of(const json& v, const json& m) {
    if (!v.is_number()) return true;
    const bool vi = v.is_number_integer() || v.is_number_unsigned();
    const bool mi = m.is_number_integer() || m.is_number_unsigned();
    if (!vi || !mi) return std::nullopt;
    const auto d = m.get<int64_t>();
    if (d <= 0) return std::nullopt;
    if (v.is_number_unsigned()) return v.get<uint64_t>() % static_cast<uint64_t>(d) == 0;
    return v.get<int64_t>() % d == 0;
  }

  Verdict all_of(const json& v, const json& list, int depth) {
    if (!list.is_array()) return std::nullopt;
    bool all = true;
    for (const auto& sub : list) {
      const Verdict r = eval(v, sub, depth + 1);
      if (!r.has_value()) return std::nullopt;
      all = all && *r;
    }
    return all;
  }

  /// How many of `list` hold (nullopt when one is undecided).
  std::optional<int> count(const json& v, const json& list, int depth) {
    if (!list.is_array()) return std::nullopt;
    int n = 0;
    for (const auto& sub : list) {
      const Verdict r = eval(v, sub, depth + 1);
      if (!r.has_value()) return std::nullopt;
      n += *r ? 1 : 0;
    }
    return n;
  }

  Verdict array_items(const json& v, const json& s, const std::string& k, const json& kv,
                      int depth) {
    if (!v.is_array()) return true;
    size_t from = 0;
    const json* rest = nullptr;
    if (k == "prefixItems" || (k == "items" && kv.is_array())) {
      if (!kv.is_array()) return std::nullopt;
      for (size_t i = 0; i < kv.size() && i < v.size(); ++i) {
        const Verdict r = eval(v[i], kv[i], depth + 1);
        if (r != true) return r;
      }
      return true;
    }
    if (k == "items") {
      if (s.contains("prefixItems")) {
        if (!s["prefixItems"].is_array()) return std::nullopt;
        from = s["prefixItems"].size();
      }
      rest = &kv;
    } else {  // additionalItems: only after draft-7 tuples
      const auto items = s.find("items");
      if (items == s.end() || !items->is_array()) return true;
      from = items->size();
      rest = &kv;
    }
    for (size_t i = from; i < v.size(); ++i) {
      const Verdict r = eval(v[i], *rest, depth + 1);
      if (r != true) return r;
    }
    return true;
  }

  static bool unique(const json& v) {
    for (size_t i = 0; i < v.size(); ++i) {
      for (size_t j = i + 1; j < v.size(); ++j) {
        if (v[i] == v[j]) return false;
      }
    }
    return true;
  }

  /// properties / patternProperties / additionalProperties, together.
  Verdict members(const json& v, const json& s, int depth) {
    if (!v.is_object()) return true;
    const json empty = json::object();
    const json& props = s.contains("properties") ? s["properties"] : empty;
    const json& pats = s.contains("patternProperties") ? s["patternProperties"] : empty;
    if (!props.is_object() || !pats.is_object()) return std::nullopt;
    const json* addl = s.contains("additionalProperties") ? &s["additionalProperties"] : nullptr;
    for (const auto& [key, member] : v.items()) {
      bool listed = false;
      if (auto p = props.find(key); p != props.end()) {
        listed = true;
        const Verdict r = eval(member, *p, depth + 1);
        if (r != true) return r;
      }
      for (const auto& [pat, ps] : pats.items()) {
        const Verdict m = search(pat, key);
        if (!m.has_value()) return std::nullopt;
        if (!*m) continue;
        listed = true;
        const Verdict r = eval(member, ps, depth + 1);
        if (r != true) return r;
      }
      if (!listed && addl != nullptr) {
        const Verdict r = eval(member, *addl, depth + 1);
        if (r != true) return r;
      }
    }
    return true;
  }

  Verdict object_keyword(const json& v, const std::string& k, const json& kv, int depth) {
    if (!v.is_object()) return true;
    if (k == "required") {
      if (!kv.is_array()) return std::nullopt;
      return std::all_of(kv.begin(), kv.end(),
                         [&](const json& n) { return n.is_string() && v.contains(n); });
    }
    if (k == "minProperties")
      return kv.is_number_unsigned() ? Verdict(v.size() >= kv.get<size_t>()) : Verdict();
    if (k == "maxProperties")
      return kv.is_number_unsigned() ? Verdict(v.size() <= kv.get<size_t>()) : Verdict();
    if (k == "propertyNames") {
      for (const auto& [key, unused] : v.items()) {
        const Verdict r = eval(json(key), kv, depth + 1);
        if (r != true) return r;
      }
      return true;
    }
    // dependencies (draft 7: arrays or schemas), dependentRequired, dependentSchemas
    if (!kv.is_object()) return std::nullopt;
    for (const auto& [key, dep] : kv.items()) {
      if (!v.contains(key)) continue;
      Verdict r;
      if (dep.is_array() && k != "dependentSchemas") {
        r = std::all_of(dep.begin(), dep.end(),
                        [&](const json& n) { return n.is_string() && v.contains(n); });
      } else if (k != "dependentRequired") {
        r = eval(v, dep, depth + 1);
      }
      if (r != true) return r;
    }
    return true;
  }

  /// One keyword's verdict: the applicators (not, allOf, anyOf, oneOf, if).
  Verdict applicator(const json& v, const json& s, const std::string& k, const json& kv,
                     int depth) {
    if (k == "not") {
      const Verdict r = eval(v, kv, depth + 1);
      return r.has_value() ? Verdict(!*r) : r;
    }
    if (k == "allOf") return all_of(v, kv, depth);
    if (k == "anyOf" || k == "oneOf") {
      const auto n = count(v, kv, depth);
      if (!n.has_value()) return std::nullopt;
      return k == "anyOf" ? *n >= 1 : *n == 1;
    }
    // if (then / else are read with it)
    const Verdict cond = eval(v, kv, depth + 1);
    if (!cond.has_value()) return std::nullopt;
    const char* branch = *cond ? "then" : "else";
    return s.contains(branch) ? eval(v, s[branch], depth + 1) : Verdict(true);
  }

  /// String keywords: minLength, maxLength, pattern.
  static Verdict string_keyword(const json& v, const std::string& k, const json& kv) {
    if (!v.is_string()) return true;
    if (k == "pattern") {
      if (!kv.is_string()) return std::nullopt;
      return search(kv.get<std::string>(), v.get<std::string>());
    }
    if (!kv.is_number_unsigned()) return std::nullopt;
    const size_t n = code_points(v.get_ref<const std::string&>());
    return k == "minLength" ? n >= kv.get<size_t>() : n <= kv.get<size_t>();
  }

  /// Array keywords besides the items ones: minItems, maxItems, uniqueItems, contains.
  Verdict array_keyword(const json& v, const json& s, const std::string& k, const json& kv,
                        int depth) {
    if (k == "uniqueItems" && !kv.is_boolean()) return std::nullopt;
    if (k == "contains" && (s.contains("minContains") || s.contains("maxContains"))) {
      return std::nullopt;
    }
    if (!v.is_array()) return true;
    if (k == "uniqueItems") return !kv.get<bool>() || unique(v);
    if (k == "contains") {
      bool undecided = false;
      for (const auto& e : v) {
        const Verdict r = eval(e, kv, depth + 1);
        if (r == true) return true;
        undecided = undecided || !r.has_value();
      }
      return undecided ? Verdict() : Verdict(false);
    }
    if (!kv.is_number_unsigned()) return std::nullopt;
    return k == "minItems" ? v.size() >= kv.get<size_t>() : v.size() <= kv.get<size_t>();
  }

  enum class Group {
    kType,
    kEnum,
    kConst,
    kApplicator,
    kThenElse,
    kBound,
    kMultipleOf,
    kString,
    kItems,
    kArray,
    kMembers,
    kObject
  };

  static std::optional<Group> group_of(const std::string& k) {
    static const std::array<std::pair<std::string_view, Group>, 33> kGroups = {{
        {"type", Group::kType},
        {"enum", Group::kEnum},
        {"const", Group::kConst},
        {"not", Group::kApplicator},
        {"allOf", Group::kApplicator},
        {"anyOf", Group::kApplicator},
        {"oneOf", Group::kApplicator},
        {"if", Group::kApplicator},
        {"then", Group::kThenElse},
        {"else", Group::kThenElse},
        {"minimum", Group::kBound},
        {"maximum", Group::kBound},
        {"exclusiveMinimum", Group::kBound},
        {"exclusiveMaximum", Group::kBound},
        {"multipleOf", Group::kMultipleOf},
        {"minLength", Group::kString},
        {"maxLength", Group::kString},
        {"pattern", Group::kString},
        {"items", Group::kItems},
        {"prefixItems", Group::kItems},
        {"additionalItems", Group::kItems},
        {"minItems", Group::kArray},
        {"maxItems", Group::kArray},
        {"uniqueItems", Group::kArray},
        {"contains", Group::kArray},
        {"properties", Group::kMembers},
        {"patternProperties", Group::kMembers},
        {"additionalProperties", Group::kMembers},
        {"required", Group::kObject},
        {"minProperties", Group::kObject},
        {"maxProperties", Group::kObject},
        {"propertyNames", Group::kObject},
        {"dependencies", Group::kObject},
    }};
    for (const auto& [name, g] : kGroups) {
      if (name == k) return g;
    }
    if (k == "dependentRequired" || k == "dependentSchemas") return Group::kObject;
    return std::nullopt;  // format, unevaluated*, an unknown keyword: not decided here
  }

  Verdict keyword(const json& v, const json& s, const std::string& k, const json& kv, int depth) {
    const std::optional<Group> g = group_of(k);
    if (!g.has_value()) return std::nullopt;
    switch (*g) {
      case Group::kType:
        return type(v, kv);
      case Group::kEnum:
        if (!kv.is_array()) return std::nullopt;
        return std::any_of(kv.begin(), kv.end(), [&](const json& e) { return e == v; });
      case Group::kConst:
        return kv == v;
      case Group::kApplicator:
        return applicator(v, s, k, kv, depth);
      case Group::kThenElse:
        return true;  // read with "if"
      case Group::kBound:
        return bound(v, s, k, kv);
      case Group::kMultipleOf:
        return multiple_of(v, kv);
      case Group::kString:
        return string_keyword(v, k, kv);
      case Group::kItems:
        return array_items(v, s, k, kv, depth);
      case Group::kArray:
        return array_keyword(v, s, k, kv, depth);
      case Group::kMembers: {
        // decided once, at the first of them present
        const char* first = s.contains("properties")          ? "properties"
                            : s.contains("patternProperties") ? "patternProperties"
                                                              : "additionalProperties";
        return k == first ? members(v, s, depth) : Verdict(true);
      }
      case Group::kObject:
        return object_keyword(v, k, kv, depth);
    }
    return std::nullopt;
  }

  const json& root_;
};

}  // namespace

std::optional<bool> satisfies(const nlohmann::json& value, const nlohmann::json& schema,
                              const nlohmann::json& root) {
  return Evaluator(root).eval(value, schema, 0);
}

}  // namespace plinth::grammar
