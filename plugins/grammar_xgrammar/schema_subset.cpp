#include "schema_subset.hpp"

#include <array>
#include <optional>
#include <set>
#include <string_view>
#include <utility>
#include <vector>

namespace plinth::grammar {
namespace {

using nlohmann::json;

constexpr std::array<std::string_view, 13> kAnnotations = {
    "title", "description", "default",         "examples", "$schema",
    "$id",   "$comment",    "deprecated",      "readOnly", "writeOnly",
    "$defs", "definitions", "contentMediaType"};

/// Assertion and applicator keywords of JSON Schema (drafts 4 to 2020-12) outside the subset.
constexpr std::array<std::string_view, 23> kUnenforced = {"multipleOf",
                                                          "uniqueItems",
                                                          "not",
                                                          "if",
                                                          "then",
                                                          "else",
                                                          "dependentRequired",
                                                          "dependentSchemas",
                                                          "dependencies",
                                                          "contains",
                                                          "minContains",
                                                          "maxContains",
                                                          "propertyNames",
                                                          "unevaluatedProperties",
                                                          "unevaluatedItems",
                                                          "additionalItems",
                                                          "$dynamicRef",
                                                          "$recursiveRef",
                                                          "$dynamicAnchor",
                                                          "$recursiveAnchor",
                                                          "$anchor",
                                                          "contentEncoding",
                                                          "contentSchema"};

/// The keywords enforced (besides annotations): the subset of the header.
constexpr std::array<std::string_view, 25> kKnown = {"type",
                                                     "properties",
                                                     "patternProperties",
                                                     "required",
                                                     "additionalProperties",
                                                     "items",
                                                     "prefixItems",
                                                     "minItems",
                                                     "maxItems",
                                                     "enum",
                                                     "const",
                                                     "anyOf",
                                                     "oneOf",
                                                     "allOf",
                                                     "$ref",
                                                     "minLength",
                                                     "maxLength",
                                                     "pattern",
                                                     "format",
                                                     "minimum",
                                                     "maximum",
                                                     "exclusiveMinimum",
                                                     "exclusiveMaximum",
                                                     "minProperties",
                                                     "maxProperties"};

/// Formats the engine enforces exactly. Not date and date-time: the engine's grammar does not
/// check the day against the month ("2022-02-31" would pass).
constexpr std::array<std::string_view, 8> kFormats = {"time", "duration", "email", "hostname",
                                                      "ipv4", "ipv6",     "uri",   "uuid"};

template <size_t N>
bool contains(const std::array<std::string_view, N>& a, std::string_view s) {
  for (std::string_view x : a) {
    if (x == s) return true;
  }
  return false;
}

/// RFC 6901 escaping of one reference token.
std::string escape(std::string_view key) {
  std::string out;
  for (char c : key) {
    if (c == '~') {
      out += "~0";
    } else if (c == '/') {
      out += "~1";
    } else {
      out += c;
    }
  }
  return out;
}

class Checker {
 public:
  explicit Checker(SchemaRefusal& why) : why_(why) {}

  bool schema(const json& s, const std::string& ptr, int depth) {
    if (depth > kMaxSchemaDepth) {
      return refuse(ptr, "schemas nest deeper than " + std::to_string(kMaxSchemaDepth) +
                             " levels; flatten the schema");
    }
    if (s.is_boolean()) return true;
    if (!s.is_object()) return refuse(ptr, "a schema must be an object or a boolean");
    for (const auto& [key, value] : s.items()) {
      if (!keyword(key, value, ptr + "/" + escape(key), depth)) return false;
    }
    return bounds_meet(s, ptr) && combination_rules(s, ptr);
  }

 private:
  bool refuse(const std::string& ptr, std::string message) {
    why_.pointer = ptr.empty() ? "/" : ptr;
    why_.message = std::move(message);
    return false;
  }

  bool each_schema_in_object(const json& v, const std::string& ptr, int depth) {
    if (!v.is_object()) return refuse(ptr, "must be an object of schemas");
    for (const auto& [k, sub] : v.items()) {
      if (!schema(sub, ptr + "/" + escape(k), depth + 1)) return false;
    }
    return true;
  }

  bool each_schema_in_array(const json& v, const std::string& ptr, int depth) {
    if (!v.is_array() || v.empty()) return refuse(ptr, "must be a non-empty array of schemas");
    for (size_t i = 0; i < v.size(); ++i) {
      if (!schema(v[i], ptr + "/" + std::to_string(i), depth + 1)) return false;
    }
    return true;
  }

  /// The applicators: keywords holding schemas. nullopt when `key` is none of them.
  std::optional<bool> applicator(const std::string& key, const json& v, const std::string& ptr,
                                 int depth) {
    if (key == "$defs" || key == "definitions" || key == "properties") {
      return each_schema_in_object(v, ptr, depth);
    }
    if (key == "additionalProperties" || key == "items") {
      if (key == "items" && v.is_array()) {
        return refuse(ptr, "items as an array (draft 4 tuples) is not supported; use prefixItems");
      }
      return schema(v, ptr, depth + 1);
    }
    if (key == "patternProperties") return pattern_properties(v, ptr, depth);
    if (key == "prefixItems" || key == "anyOf") return each_schema_in_array(v, ptr, depth);
    if (key == "oneOf") return one_of(v, ptr, depth);
    if (key == "allOf") {
      if (!v.is_array() || v.size() != 1) {
        return refuse(ptr, "allOf with more than one member is not supported; merge the members");
      }
      return each_schema_in_array(v, ptr, depth);
    }
    return std::nullopt;
  }

  /// patternProperties the engine enforces exactly or stricter: one pattern (keys must match it
  /// in full, where JSON Schema searches), beside additionalProperties false and no properties or
  /// required (the engine would let a named key through with the pattern's schema only, and does
  /// not check required keys here). schema_rewrite.cpp turns the other enforceable forms into
  /// additionalProperties first. The siblings are checked by combination_rules.
  bool pattern_properties(const json& v, const std::string& ptr, int depth) {
    if (!v.is_object() || v.size() != 1) {
      return refuse(ptr,
                    "patternProperties is enforced with one pattern only (beside "
                    "additionalProperties false), or with patterns matching every key");
    }
    if (!pattern(json(v.begin().key()), ptr + "/" + escape(v.begin().key()))) return false;
    return each_schema_in_object(v, ptr, depth);
  }

  bool pattern_properties_siblings(const json& s, const std::string& ptr) {
    if (!s.contains("patternProperties")) return true;
    const auto addl = s.find("additionalProperties");
    if (addl == s.end() || *addl != json(false)) {
      return refuse(ptr + "/patternProperties",
                    "patternProperties with a pattern not matching every key is enforced only "
                    "beside additionalProperties false (else give additionalProperties a schema)");
    }
    for (const char* k : {"properties", "required"}) {
      auto it = s.find(k);
      if (it != s.end() && !it->empty()) {
        return refuse(ptr + "/patternProperties",
                      std::string("patternProperties beside additionalProperties false and \"") +
                          k + "\" is not enforced");
      }
    }
    return true;
  }

  /// A lower bound above its upper bound (an empty range) is refused by the pointer of the
  /// lower one: XGrammar refuses each such pair too (also where the schema allows other values,
  /// as an optional property or another type), but without saying where. Bounds already
  /// checked to be numbers (bound()).
  bool bounds_meet(const json& s, const std::string& ptr) {
    struct Pair {
      const char* lo;
      const char* hi;
      bool empty_when_equal;
    };
    static constexpr Pair kPairs[] = {{"minLength", "maxLength", false},
                                      {"minItems", "maxItems", false},
                                      {"minProperties", "maxProperties", false},
                                      {"minimum", "maximum", false},
                                      {"exclusiveMinimum", "maximum", true},
                                      {"minimum", "exclusiveMaximum", true},
                                      {"exclusiveMinimum", "exclusiveMaximum", true}};
    for (const Pair& p : kPairs) {
      const auto lo = s.find(p.lo), hi = s.find(p.hi);
      if (lo == s.end() || hi == s.end() || !lo->is_number() || !hi->is_number()) continue;
      const double a = lo->get<double>(), b = hi->get<double>();
      if (a > b || (p.empty_when_equal && a == b)) {
        return refuse(ptr + "/" + p.lo, std::string(p.lo) + " " + lo->dump() +
                                            (a > b ? " is greater than " : " equals ") + p.hi +
                                            " " + hi->dump() +
                                            ": the range is empty; the grammar engine refuses "
                                            "it (fix the bounds)");
      }
    }
    return true;
  }

  /// The bounds: non-negative integer lengths and counts, numeric limits. nullopt for others.
  std::optional<bool> bound(const std::string& key, const json& v, const std::string& ptr) {
    if (key == "minLength" || key == "maxLength" || key == "minItems" || key == "maxItems") {
      if (!v.is_number_integer() || v.get<int64_t>() < 0) {
        return refuse(ptr, "must be a non-negative integer");
      }
      return true;
    }
    if (key == "minimum" || key == "maximum" || key == "exclusiveMinimum" ||
        key == "exclusiveMaximum") {
      if (!v.is_number()) return refuse(ptr, "must be a number");
      return true;
    }
    return std::nullopt;
  }

  bool keyword(const std::string& key, const json& v, const std::string& ptr, int depth) {
    if (contains(kAnnotations, key) && key != "$defs" && key != "definitions") return true;
    if (auto r = applicator(key, v, ptr, depth)) return *r;
    if (auto r = bound(key, v, ptr)) return *r;
    if (key == "$ref") return ref(v, ptr);
    if (key == "pattern") return pattern(v, ptr);
    if (key == "format") {
      if (v.is_string() && contains(kFormats, v.get<std::string>())) return true;
      return refuse(ptr, "format " + v.dump() +
                             " is not enforced; supported: date, date-time (without pattern), "
                             "time, duration, email, hostname, ipv4, ipv6, uri, uuid");
    }
    if (key == "type") return type(v, ptr);
    if (key == "required" || key == "enum" || key == "const") return true;
    if (contains(kUnenforced, key)) {
      return refuse(ptr, "keyword \"" + key +
                             "\" cannot be enforced by the grammar engine; remove it or "
                             "express it with the supported keywords");
    }
    return true;  // not a JSON Schema keyword: an annotation, as validators treat it
  }

  bool type(const json& v, const std::string& ptr) {
    static const std::set<std::string> names = {"string", "number", "integer", "boolean",
                                                "object", "array",  "null"};
    if (v.is_string() && names.count(v.get<std::string>()) != 0) return true;
    if (v.is_array() && !v.empty()) {
      for (const auto& t : v) {
        if (!t.is_string() || names.count(t.get<std::string>()) == 0) {
          return refuse(ptr, "unknown type " + t.dump());
        }
      }
      return true;
    }
    return refuse(ptr, "type must be a type name or a non-empty array of them");
  }

  bool ref(const json& v, const std::string& ptr) {
    if (!v.is_string()) return refuse(ptr, "$ref must be a string");
    const auto r = v.get<std::string>();
    if (r == "#" || r.rfind("#/", 0) == 0) return true;
    return refuse(ptr, "$ref " + v.dump() + " is not local; only \"#\" and \"#/...\" are resolved");
  }

  bool pattern(const json& v, const std::string& ptr) {
    if (!v.is_string()) return refuse(ptr, "pattern must be a string");
    const auto p = v.get<std::string>();
    for (size_t i = 0; i + 1 < p.size(); ++i) {
      if (p[i] == '\\') {
        if (p[i + 1] >= '1' && p[i + 1] <= '9') {
          return refuse(ptr, "backreferences in pattern are not supported");
        }
        ++i;
        continue;
      }
      if (p[i] == '(' && p[i + 1] == '?') {
        return refuse(ptr, "lookaround and other (?...) groups in pattern are not supported");
      }
    }
    if (json_unsafe_literal(p)) {
      return refuse(ptr,
                    "a '\"', '\\' or control character in pattern outside a negated class is not "
                    "supported (the engine would write it unescaped inside the JSON string)");
    }
    return anchors(p, ptr);
  }

  /// Whether `p` names a '"', '\\' or control character (raw or by escape) outside a negated
  /// character class. XGrammar 0.2.9 writes such a literal (and a one-member class) raw inside
  /// the JSON string, which makes invalid JSON (found by the JSON Schema reference matcher,
  /// tests/plugins/grammar_xgrammar/reference_json.hpp); a negated class it intersects with
  /// the characters a JSON string may hold.
  static bool json_unsafe_literal(const std::string& p) {
    bool in_class = false, negated = false;
    for (size_t i = 0; i < p.size(); ++i) {
      const auto c = static_cast<unsigned char>(p[i]);
      long denoted = c;
      if (c == '\\' && i + 1 < p.size()) {
        denoted = escaped_char(p, ++i);
      } else if (in_class && c == ']') {
        in_class = false;
        continue;
      } else if (!in_class && c == '[') {
        in_class = true;
        negated = i + 1 < p.size() && p[i + 1] == '^';
        if (negated) ++i;
        continue;
      }
      const bool unsafe = denoted == '"' || denoted == '\\' || (denoted >= 0 && denoted < 0x20);
      if (unsafe && !(in_class && negated)) return true;
    }
    return false;
  }

  /// The character the escape at p[at] (after its '\\') names: 0 for any control escape, -1
  /// for a class escape or one naming no single character.
  static long escaped_char(const std::string& p, size_t at) {
    const auto hex = [&](size_t from, size_t n) -> long {
      if (from + n > p.size()) return -1;
      const std::string h = p.substr(from, n);
      if (h.find_first_not_of("0123456789abcdefABCDEF") != std::string::npos) return -1;
      return std::stol(h, nullptr, 16);
    };
    const char e = p[at];
    if (e == '"' || e == '\\') return static_cast<unsigned char>(e);
    if (std::string_view("tnrfv0c").find(e) != std::string_view::npos) return 0;
    if (e == 'x') return hex(at + 1, 2);
    if (e == 'u') return hex(at + 1, 4);
    return -1;
  }

  /// '^' only at the start of the pattern or of an alternative or group, '$' only at their end
  /// (outside character classes): the engine would drop an anchor elsewhere.
  bool anchors(const std::string& p, const std::string& ptr) {
    bool in_class = false;
    for (size_t i = 0; i < p.size(); ++i) {
      const char c = p[i];
      if (c == '\\') {
        ++i;
        continue;
      }
      if (in_class) {
        if (c == ']') in_class = false;
        continue;
      }
      if (c == '[') {
        in_class = true;
        if (i + 1 < p.size() && p[i + 1] == '^') ++i;
        continue;
      }
      if (c == '^' && i > 0 && p[i - 1] != '(' && p[i - 1] != '|') {
        return refuse(ptr, "an anchor ^ inside the pattern is not supported");
      }
      if (c == '$' && i + 1 < p.size() && p[i + 1] != ')' && p[i + 1] != '|') {
        return refuse(ptr, "an anchor $ inside the pattern is not supported");
      }
    }
    return true;
  }

  /// Alternatives of oneOf are accepted only when no instance can match two of them (XGrammar
  /// enforces oneOf as anyOf): each names one distinct type (integer and number count as one), or
  /// each is a const / enum with values no other alternative has.
  bool one_of(const json& v, const std::string& ptr, int depth) {
    if (!each_schema_in_array(v, ptr, depth)) return false;
    std::set<std::string> types;
    std::set<std::string> values;
    bool by_type = true, by_value = true;
    for (const auto& alt : v) {
      if (!alt.is_object()) {
        by_type = by_value = false;
        break;
      }
      auto t = alt.find("type");
      if (t == alt.end() || !t->is_string() ||
          !types.insert(t->get<std::string>() == "integer" ? "number" : t->get<std::string>())
               .second) {
        by_type = false;
      }
      auto c = alt.find("const");
      auto e = alt.find("enum");
      if (c != alt.end()) {
        if (!values.insert(c->dump()).second) by_value = false;
      } else if (e != alt.end() && e->is_array()) {
        for (const auto& x : *e) {
          if (!values.insert(x.dump()).second) by_value = false;
        }
      } else {
        by_value = false;
      }
    }
    if (by_type || by_value) return true;
    return refuse(ptr,
                  "oneOf is enforced only when its alternatives are disjoint (distinct types "
                  "or distinct const / enum values); use anyOf if overlap is acceptable");
  }

  /// Known keywords of `s` other than annotations.
  static std::vector<std::string> assertions(const json& s) {
    std::vector<std::string> out;
    for (const auto& [key, value] : s.items()) {
      if (key == "$defs" || key == "definitions" || contains(kAnnotations, key)) continue;
      if (contains(kKnown, key)) out.push_back(key);
    }
    return out;
  }

  static bool has_type(const json& value, const std::string& t) {
    if (t == "string") return value.is_string();
    if (t == "integer")
      return value.is_number_integer() ||
             (value.is_number_float() &&
              value.get<double>() ==
                  static_cast<double>(static_cast<int64_t>(value.get<double>())));
    if (t == "number") return value.is_number();
    if (t == "boolean") return value.is_boolean();
    if (t == "object") return value.is_object();
    if (t == "array") return value.is_array();
    return t == "null" && value.is_null();
  }

  static bool value_has_types(const json& value, const json& type) {
    if (type.is_string()) return has_type(value, type.get<std::string>());
    for (const auto& t : type) {
      if (t.is_string() && has_type(value, t.get<std::string>())) return true;
    }
    return false;
  }

  /// The engine enforces a combinator ($ref, anyOf, oneOf, allOf) alone: it drops the keywords
  /// beside it.
  bool combinator_alone(const json& s, const std::vector<std::string>& keys,
                        const std::string& ptr) {
    for (const char* head : {"$ref", "anyOf", "oneOf", "allOf"}) {
      if (!s.contains(head)) continue;
      for (const std::string& k : keys) {
        if (k == head) continue;
        return refuse(ptr + "/" + escape(k), "\"" + k + "\" beside \"" + head +
                                                 "\" is not enforced; move it into the " +
                                                 "referenced or alternative schemas");
      }
    }
    return true;
  }

  /// enum / const values all of the schema's type.
  bool literal_types(const json& s, const char* lit, const std::string& ptr) {
    const json& values = s.at(lit);
    const bool is_enum = std::string_view(lit) == "enum";
    if (is_enum && (!values.is_array() || values.empty())) {
      return refuse(ptr + "/enum", "enum must be a non-empty array");
    }
    if (!s.contains("type")) return true;
    const json& type = s.at("type");
    if (!is_enum) {
      if (value_has_types(values, type)) return true;
      return refuse(ptr + "/const", "the const value does not have the schema's type");
    }
    for (size_t i = 0; i < values.size(); ++i) {
      if (!value_has_types(values[i], type)) {
        return refuse(ptr + "/enum/" + std::to_string(i),
                      "the enum value does not have the schema's type");
      }
    }
    return true;
  }

  /// A literal (enum, const) is enforced alone too: only "type" may stand beside it.
  bool literal_alone(const json& s, const std::vector<std::string>& keys, const std::string& ptr) {
    for (const char* lit : {"enum", "const"}) {
      if (!s.contains(lit)) continue;
      for (const std::string& k : keys) {
        if (k == lit || k == "type") continue;
        return refuse(ptr + "/" + escape(k), "\"" + k + "\" beside \"" + lit +
                                                 "\" is not enforced; list only the values "
                                                 "that satisfy it");
      }
      if (!literal_types(s, lit, ptr)) return false;
    }
    return true;
  }

  bool exclusive_keywords(const json& s, const std::string& ptr) {
    const std::vector<std::string> keys = assertions(s);
    return combinator_alone(s, keys, ptr) && literal_alone(s, keys, ptr);
  }

  /// The engine applies a type's keywords only under that one "type" (it ignores maxLength in
  /// {"maxLength": 2} or {"type": ["string", "null"], "maxLength": 2}).
  bool typed_keywords(const json& s, const std::string& ptr) {
    static const std::array<std::pair<std::string_view, std::string_view>, 13> kOwner = {{
        {"minLength", "string"},
        {"maxLength", "string"},
        {"pattern", "string"},
        {"format", "string"},
        {"minimum", "number"},
        {"maximum", "number"},
        {"exclusiveMinimum", "number"},
        {"exclusiveMaximum", "number"},
        {"minItems", "array"},
        {"maxItems", "array"},
        {"prefixItems", "array"},
        {"minProperties", "object"},  // the JSON Schema Test Suite's {"minProperties": 1}
        {"maxProperties", "object"},  // took {} (XGrammar counts only under "object")
    }};
    const auto t = s.find("type");
    std::string type = t != s.end() && t->is_string() ? t->get<std::string>() : "";
    if (type == "integer") type = "number";
    for (const auto& [key, owner] : kOwner) {
      if (!s.contains(std::string(key)) || type == owner) continue;
      return refuse(ptr + "/" + std::string(key),
                    "\"" + std::string(key) + "\" is enforced only in a schema whose \"type\" is " +
                        "the single type \"" + std::string(owner) +
                        (owner == "number" ? "\" or \"integer\"" : "\"") +
                        "; add it (use anyOf for a nullable value)");
    }
    return true;
  }

  bool combination_rules(const json& s, const std::string& ptr) {
    if (!exclusive_keywords(s, ptr)) return false;
    if (!pattern_properties_siblings(s, ptr)) return false;
    if (!typed_keywords(s, ptr)) return false;
    const bool lengths = s.contains("minLength") || s.contains("maxLength");
    if (lengths && s.contains("pattern")) {
      return refuse(ptr + "/pattern",
                    "pattern together with minLength / maxLength is not enforced; put the length "
                    "into the pattern ({m,n})");
    }
    if (s.contains("pattern") && s.contains("format")) {
      return refuse(ptr + "/format", "format together with pattern is not enforced; keep one");
    }
    if (lengths && s.contains("format")) {
      return refuse(ptr + "/format", "format together with minLength / maxLength is not enforced");
    }
    return true;
  }

  SchemaRefusal& why_;
};

}  // namespace

bool check_schema_subset(const nlohmann::json& schema, SchemaRefusal& why) {
  return Checker(why).schema(schema, "", 0);
}

}  // namespace plinth::grammar
