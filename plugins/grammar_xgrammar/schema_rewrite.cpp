#include "schema_rewrite.hpp"

#include "schema_eval.hpp"

#include <algorithm>
#include <array>
#include <optional>
#include <regex>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "json_string_classes.hpp"

namespace plinth::grammar {
namespace {

using json = nlohmann::ordered_json;

// RFC 3339 full-date: the year 0001..9999, each month's days, February 29 in leap years only
// (divisible by 4 and not by 100, or by 400).
#define PLINTH_YEAR "([1-9][0-9]{3}|0[1-9][0-9]{2}|00[1-9][0-9]|000[1-9])"
#define PLINTH_LEAP_YEAR \
  "([0-9]{2}(0[48]|[2468][048]|[13579][26])|(0[48]|[2468][048]|[13579][26])00)"
#define PLINTH_MONTH_DAY                                                             \
  "((0[13578]|1[02])-(0[1-9]|[12][0-9]|3[01])|(0[469]|11)-(0[1-9]|[12][0-9]|30)|02-" \
  "(0[1-9]|1[0-9]|2[0-8]))"
#define PLINTH_DATE "(" PLINTH_YEAR "-" PLINTH_MONTH_DAY "|" PLINTH_LEAP_YEAR "-02-29)"
#define PLINTH_TIME \
  "([01][0-9]|2[0-3]):[0-5][0-9]:[0-5][0-9](\\.[0-9]+)?(Z|[+-]([01][0-9]|2[0-3]):[0-5][0-9])"

constexpr const char* kDatePattern = "^" PLINTH_DATE "$";
constexpr const char* kDateTimePattern = "^" PLINTH_DATE "T" PLINTH_TIME "$";

/// Formats some JSON Schema draft defines (draft 4 to 2020-12); any other is an annotation.
constexpr std::array<std::string_view, 19> kDefinedFormats = {
    "date-time", "date",          "time", "duration",     "email",        "idn-email",
    "hostname",  "idn-hostname",  "ipv4", "ipv6",         "uri",          "uri-reference",
    "iri",       "iri-reference", "uuid", "uri-template", "json-pointer", "relative-json-pointer",
    "regex"};

/// Patterns that an ECMAScript search finds in every string.
constexpr std::array<std::string_view, 6> kMatchAll = {"", ".*", "^.*", ".*$", "(.*)", "^(.*)"};

/// Keywords that carry no assertion.
constexpr std::array<std::string_view, 13> kAnnotations = {
    "title", "description", "default",         "examples", "$schema",
    "$id",   "$comment",    "deprecated",      "readOnly", "writeOnly",
    "$defs", "definitions", "contentMediaType"};

/// Lower / upper bounds: merged by the largest / the smallest.
constexpr std::array<std::string_view, 6> kLower = {
    "minLength", "minItems", "minimum", "exclusiveMinimum", "minProperties", "minContains"};
constexpr std::array<std::string_view, 6> kUpper = {
    "maxLength", "maxItems", "maximum", "exclusiveMaximum", "maxProperties", "maxContains"};

template <size_t N>
bool in(const std::array<std::string_view, N>& a, std::string_view s) {
  return std::find(a.begin(), a.end(), s) != a.end();
}

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

/// Not satisfiable by any instance: the caller refuses with this message.
struct Unsatisfiable {
  std::string message;
};

/// The JSON type names a schema's "type" allows (all seven when absent).
std::set<std::string> type_set(const json& s) {
  static const std::set<std::string> all = {"string", "number", "integer", "boolean",
                                            "object", "array",  "null"};
  auto t = s.find("type");
  if (t == s.end()) return all;
  std::set<std::string> out;
  if (t->is_string()) {
    out.insert(t->get<std::string>());
  } else if (t->is_array()) {
    for (const auto& x : *t) {
      if (x.is_string()) out.insert(x.get<std::string>());
    }
  }
  return out;
}

/// The intersection of two "type" values ("integer" is in "number").
std::set<std::string> intersect_types(const std::set<std::string>& a,
                                      const std::set<std::string>& b) {
  std::set<std::string> out;
  for (const auto& t : a) {
    if (b.count(t) != 0) {
      out.insert(t);
    } else if ((t == "integer" && b.count("number") != 0) ||
               (t == "number" && b.count("integer") != 0)) {
      out.insert("integer");  // an integer is a number
    }
  }
  return out;
}

class Rewriter {
 public:
  Rewriter(const json& root, bool strict, SchemaRefusal& why)
      : root_(root), strict_(strict), why_(why) {}

  /// Rewrites `s` (at `ptr` of the schema as given) and everything below it.
  bool node(json& s, const std::string& ptr, int depth) {
    if (++work_ > kMaxWork) return refuse(ptr, too_much());
    if (depth > kMaxSchemaDepth) {
      return refuse(ptr, "schemas nest deeper than " + std::to_string(kMaxSchemaDepth) +
                             " levels (counting resolved allOf references); flatten the schema");
    }
    if (!s.is_object()) return true;
    enumerate_values(s);
    if (!children(s, ptr, depth)) return false;
    tuple_items(s);
    if (s.contains("allOf") && !merge_all_of(s, ptr, depth)) return false;
    if (!merge_siblings(s, ptr, depth)) return false;
    return local(s, ptr);
  }

 private:
  bool refuse(const std::string& ptr, std::string message) const {
    why_.pointer = ptr.empty() ? "/" : ptr;
    why_.message = std::move(message);
    return false;
  }

  bool each_in_object(json& v, const std::string& p, int depth) {
    if (!v.is_object()) return true;  // the subset check refuses it
    for (auto& [k, sub] : v.items()) {
      if (!node(sub, p + "/" + escape(k), depth + 1)) return false;
    }
    return true;
  }

  bool each_in_array(json& v, const std::string& p, int depth) {
    if (!v.is_array()) return true;  // the subset check refuses it
    for (size_t i = 0; i < v.size(); ++i) {
      if (!node(v[i], p + "/" + std::to_string(i), depth + 1)) return false;
    }
    return true;
  }

  bool children(json& s, const std::string& ptr, int depth) {
    for (auto& [key, value] : s.items()) {
      const std::string p = ptr + "/" + escape(key);
      bool ok = true;
      if (key == "properties" || key == "patternProperties" || key == "$defs" ||
          key == "definitions") {
        ok = each_in_object(value, p, depth);
      } else if (key == "anyOf" || key == "oneOf" || key == "allOf" || key == "prefixItems") {
        ok = each_in_array(value, p, depth);
      } else if (key == "items" || key == "additionalProperties" || key == "not") {
        ok = node(value, p, depth + 1);
      }
      if (!ok) return false;
    }
    return true;
  }

  /// A schema that lists its values (enum or const, itself or in an allOf member) beside other
  /// assertions is the list of those values that satisfy all of it: decided per value on the
  /// schema as given (schema_eval.hpp), before anything below it is rewritten (a stricter
  /// rewrite under "not" would be looser). Left as it is when a value is undecided.
  void enumerate_values(json& s) {
    const std::optional<json> candidates = listed_values(s);
    if (!candidates.has_value()) return;
    const bool beside = std::any_of(s.items().begin(), s.items().end(), [](const auto& kv) {
      return kv.key() != "enum" && kv.key() != "const" && kv.key() != "type" &&
             !in(kAnnotations, kv.key());
    });
    if (!beside) return;  // the list alone (with type: enum_of_type)
    if (!plain_root_.has_value()) plain_root_ = nlohmann::json::parse(root_.dump());
    const nlohmann::json plain = nlohmann::json::parse(s.dump());
    json kept = json::array();
    for (const auto& v : *candidates) {
      const std::optional<bool> ok =
          satisfies(nlohmann::json::parse(v.dump()), plain, *plain_root_);
      if (!ok.has_value()) return;
      if (*ok) kept.push_back(v);
    }
    json out = json::object();
    for (const auto& [k, v] : s.items()) {
      if (in(kAnnotations, k)) out[k] = v;  // $defs / definitions too: $refs may point there
    }
    out["enum"] = std::move(kept);
    s = std::move(out);
  }

  /// The values `s` lists by const or enum, itself or in an allOf member; nullopt when none.
  static std::optional<json> listed_values(const json& s) {
    auto of = [](const json& m) -> std::optional<json> {
      if (auto c = m.find("const"); c != m.end()) return json::array({*c});
      if (auto e = m.find("enum"); e != m.end() && e->is_array()) return *e;
      return std::nullopt;
    };
    if (auto own = of(s); own.has_value()) return own;
    if (auto all = s.find("allOf"); all != s.end() && all->is_array()) {
      for (const auto& m : *all) {
        if (!m.is_object()) continue;
        if (auto listed = of(m); listed.has_value()) return listed;
      }
    }
    return std::nullopt;
  }

  /// "additionalProperties" that allows everything (true, or a schema of annotations only) is
  /// dropped from `s` outside strict mode (where its absence means false): it asserts nothing,
  /// but XGrammar would read it as "type": "object" ({"additionalProperties": true} took no
  /// string: JSONSchemaBench's bower.json). Exact.
  void open_additional(json& s) const {
    if (strict_ || !s.is_object()) return;
    const auto a = s.find("additionalProperties");
    if (a == s.end()) return;
    const bool open =
        (a->is_boolean() && a->get<bool>()) ||
        (a->is_object() && std::all_of(a->items().begin(), a->items().end(),
                                       [](const auto& kv) { return in(kAnnotations, kv.key()); }));
    if (open) s.erase(a);
  }

  /// Rewrites that concern one schema object alone: format, patternProperties, strict.
  bool local(json& s, const std::string& ptr) {
    open_additional(s);
    if (auto f = s.find("format"); f != s.end() && f->is_string()) {
      const std::string name = f->get<std::string>();
      if (!in(kDefinedFormats, name)) {
        s.erase("format");  // an annotation: validators ignore it
      } else if ((name == "date" || name == "date-time") && !s.contains("pattern")) {
        s.erase("format");
        s["pattern"] = name == "date" ? kDatePattern : kDateTimePattern;
      }
    }
    if (auto p = s.find("pattern"); p != s.end() && p->is_string()) {
      // Surrogates out of its complements: XGrammar's UTF-8 decoding takes them (reference_json).
      *p = pattern_without_surrogates(ecmascript_dots(p->get<std::string>()));
    }
    if (s.contains("patternProperties") && !pattern_properties(s, ptr)) return false;
    if (auto pp = s.find("patternProperties"); pp != s.end() && pp->is_object()) {
      json keyed = json::object();
      for (const auto& [k, v] : pp->items()) keyed[ecmascript_dots(k)] = v;
      *pp = std::move(keyed);
    }
    if (!required_named(s, ptr)) return false;
    if (!enum_of_type(s, ptr)) return false;
    split_by_type(s);
    if (s.contains("oneOf")) one_of_to_any_of(s);
    return true;
  }

  /// `s` with local $ref followed (a few hops); `s` itself when it is none or does not resolve.
  const json& follow(const json& s) const {
    const json* cur = &s;
    for (int hops = 0; hops < 8 && cur->is_object() && cur->contains("$ref"); ++hops) {
      const json& r = cur->at("$ref");
      if (!r.is_string()) break;
      try {
        cur = &resolve(r.get<std::string>());
      } catch (const SchemaRefusal&) {
        break;
      }
    }
    return *cur;
  }

  /// The values `s` allows when it is a const or an enum (after $ref); nullopt otherwise.
  std::optional<json> literal_values(const json& s) const {
    const json& t = follow(s);
    if (!t.is_object()) return std::nullopt;
    if (auto c = t.find("const"); c != t.end()) return json::array({*c});
    if (auto e = t.find("enum"); e != t.end() && e->is_array()) return *e;
    return std::nullopt;
  }

  static bool values_disjoint(const json& a, const json& b) {
    for (const auto& x : a) {
      if (std::find(b.begin(), b.end(), x) != b.end()) return false;
    }
    return true;
  }

  /// The types an alternative's instances can have (after $ref; enum / const narrow it).
  std::set<std::string> instance_types(const json& alt) const {
    const json& t = follow(alt);
    if (t.is_boolean()) return t.get<bool>() ? type_set(json::object()) : std::set<std::string>{};
    if (!t.is_object()) return type_set(json::object());
    if (auto lits = literal_values(t)) {
      std::set<std::string> out;
      for (const auto& v : *lits) {
        if (v.is_string()) out.insert("string");
        if (v.is_number()) out.insert("number");
        if (v.is_boolean()) out.insert("boolean");
        if (v.is_object()) out.insert("object");
        if (v.is_array()) out.insert("array");
        if (v.is_null()) out.insert("null");
      }
      return out;
    }
    std::set<std::string> out = type_set(t);
    if (out.count("integer") != 0) out.insert("number");  // an integer is a number
    out.erase("integer");
    return out;
  }

  /// No instance satisfies both: their types are apart, their literal values are, or both are
  /// objects requiring a property whose const / enum values are apart (a discriminator).
  bool disjoint(const json& a, const json& b) const {
    const auto ta = instance_types(a), tb = instance_types(b);
    if (std::none_of(ta.begin(), ta.end(),
                     [&](const std::string& t) { return tb.count(t) != 0; })) {
      return true;
    }
    const auto la = literal_values(a), lb = literal_values(b);
    if (la && lb) return values_disjoint(*la, *lb);
    const json& oa = follow(a);
    const json& ob = follow(b);
    if (ta != std::set<std::string>{"object"} || tb != ta || !oa.is_object() || !ob.is_object()) {
      return false;
    }
    const auto pa = oa.find("properties"), pb = ob.find("properties");
    const auto ra = oa.find("required"), rb = ob.find("required");
    if (pa == oa.end() || pb == ob.end() || ra == oa.end() || rb == ob.end() || !ra->is_array() ||
        !rb->is_array() || !pa->is_object() || !pb->is_object()) {
      return false;
    }
    for (const auto& name : *ra) {
      if (!name.is_string() || std::find(rb->begin(), rb->end(), name) == rb->end()) continue;
      const std::string n = name.get<std::string>();
      if (!pa->contains(n) || !pb->contains(n)) continue;
      const auto va = literal_values(pa->at(n)), vb = literal_values(pb->at(n));
      if (va && vb && values_disjoint(*va, *vb)) return true;
    }
    return false;
  }

  /// oneOf whose alternatives are pairwise disjoint is anyOf (exactly one can hold anyway).
  void one_of_to_any_of(json& s) const {
    const json& alts = s["oneOf"];
    if (!alts.is_array() || s.contains("anyOf")) return;
    for (size_t i = 0; i < alts.size(); ++i) {
      for (size_t j = i + 1; j < alts.size(); ++j) {
        if (!disjoint(alts[i], alts[j])) return;
      }
    }
    json out = json::object();
    for (const auto& [k, v] : s.items()) out[k == "oneOf" ? "anyOf" : k] = v;
    s = std::move(out);
  }

  /// A required name that "properties" does not list gets an entry there with the schema
  /// additionalProperties gives it (true when absent): the same instances are valid, and the
  /// engine enforces required names only among the listed properties.
  bool required_named(json& s, const std::string& ptr) const {
    auto req = s.find("required");
    if (req == s.end() || !req->is_array() || s.contains("patternProperties")) return true;
    std::vector<std::string> missing;
    for (const auto& r : *req) {
      if (!r.is_string()) continue;
      auto p = s.find("properties");
      if (p == s.end() || !p->is_object() || !p->contains(r.get<std::string>())) {
        missing.push_back(r.get<std::string>());
      }
    }
    if (missing.empty()) return true;
    json addl = s.contains("additionalProperties") ? s["additionalProperties"] : json(!strict_);
    if (addl.is_boolean() && !addl.get<bool>()) {
      return refuse(ptr + "/required", "property \"" + missing.front() +
                                           "\" is required but additionalProperties forbids it");
    }
    if (!s.contains("properties")) s["properties"] = json::object();
    if (!s["properties"].is_object()) return true;  // the subset check refuses it
    for (const std::string& name : missing) {
      s["properties"][name] = addl.is_boolean() ? json::object() : addl;
    }
    return true;
  }

  static bool has_type(const json& v, const std::string& t) {
    if (t == "string") return v.is_string();
    if (t == "integer") {
      return v.is_number_integer() ||
             (v.is_number_float() &&
              v.get<double>() == static_cast<double>(static_cast<int64_t>(v.get<double>())));
    }
    if (t == "number") return v.is_number();
    if (t == "boolean") return v.is_boolean();
    if (t == "object") return v.is_object();
    if (t == "array") return v.is_array();
    return t == "null" && v.is_null();
  }

  /// enum beside type: the values of another type can never validate, so they go (refused when
  /// none is left).
  bool enum_of_type(json& s, const std::string& ptr) const {
    auto e = s.find("enum");
    if (e == s.end() || !e->is_array() || !s.contains("type")) return true;
    const std::set<std::string> types = type_set(s);
    json kept = json::array();
    for (const auto& v : *e) {
      if (std::any_of(types.begin(), types.end(),
                      [&](const std::string& t) { return has_type(v, t); })) {
        kept.push_back(v);
      }
    }
    if (kept.empty()) return refuse(ptr + "/enum", "no enum value has the schema's type");
    *e = std::move(kept);
    return true;
  }

  /// The JSON type a keyword constrains ("" for none): string, number (integers too), array,
  /// object.
  static std::string_view owner(std::string_view key) {
    static const std::array<std::pair<std::string_view, std::string_view>, 21> kOwner = {{
        {"minLength", "string"},
        {"maxLength", "string"},
        {"pattern", "string"},
        {"format", "string"},
        {"minimum", "number"},
        {"maximum", "number"},
        {"exclusiveMinimum", "number"},
        {"exclusiveMaximum", "number"},
        {"multipleOf", "number"},
        {"minItems", "array"},
        {"maxItems", "array"},
        {"prefixItems", "array"},
        {"items", "array"},
        {"uniqueItems", "array"},
        {"contains", "array"},
        {"properties", "object"},
        {"required", "object"},
        {"additionalProperties", "object"},
        {"patternProperties", "object"},
        {"minProperties", "object"},
        {"maxProperties", "object"},
    }};
    for (const auto& [k, o] : kOwner) {
      if (k == key) return o;
    }
    return "";
  }

  /// A schema whose string, number or array keywords stand without that single "type" (absent,
  /// or a list: {"type": ["string", "null"], "maxLength": 3}) becomes an anyOf with one
  /// alternative per type, each holding that type's keywords: exact, as a keyword constrains only
  /// instances of its type. Schemas with enum, const, combinators or $ref are left alone.
  /// The keywords of `s` by the type they constrain; true when some string, number or array
  /// keyword stands without that single type.
  static bool group_by_owner(const json& s, const std::set<std::string>& types,
                             std::vector<std::pair<std::string, json>>& by_owner) {
    bool needs_split = false;
    for (const auto& [key, value] : s.items()) {
      const std::string o(owner(key));
      if (o.empty()) continue;
      auto it = std::find_if(by_owner.begin(), by_owner.end(),
                             [&](const auto& p) { return p.first == o; });
      if (it == by_owner.end()) {
        by_owner.emplace_back(o, json::object());
        it = by_owner.end() - 1;
      }
      it->second[key] = value;
      const bool single = types.size() == 1 &&
                          (*types.begin() == o || (o == "number" && *types.begin() == "integer"));
      const bool counted = key == "minProperties" || key == "maxProperties";
      if (!single && (o != "object" || counted)) needs_split = true;
    }
    return needs_split;
  }

  static void split_by_type(json& s) {
    for (const char* k : {"enum", "const", "anyOf", "oneOf", "allOf", "$ref", "not", "if"}) {
      if (s.contains(k)) return;
    }
    std::set<std::string> types = type_set(s);
    if (types.count("number") != 0) types.erase("integer");
    using ByOwner = std::vector<std::pair<std::string, json>>;  // owner -> its keywords, in order
    ByOwner by_owner;
    if (!group_by_owner(s, types, by_owner)) return;
    json alts = json::array();
    std::vector<std::string> rest;
    for (const char* t : {"string", "number", "integer", "boolean", "object", "array", "null"}) {
      if (types.count(t) == 0) continue;
      const std::string o = std::string(t) == "integer" ? "number" : t;
      auto it = std::find_if(by_owner.begin(), by_owner.end(),
                             [&](const auto& p) { return p.first == o; });
      if (it == by_owner.end()) {
        rest.emplace_back(t);
        continue;
      }
      json alt = json::object();
      alt["type"] = t;
      for (const auto& [k, v] : it->second.items()) alt[k] = v;
      alts.push_back(std::move(alt));
    }
    if (!rest.empty())
      alts.push_back(json{{"type", rest.size() == 1 ? json(rest[0]) : json(rest)}});
    json out = json::object();
    for (const auto& [k, v] : s.items()) {
      if (k != "type" && owner(k).empty()) out[k] = v;  // annotations, definitions
    }
    out["anyOf"] = std::move(alts);
    s = std::move(out);
  }

  /// true when ECMAScript's search of `pattern` finds a match in `key`; nullopt when std::regex
  /// cannot compile the pattern.
  static std::optional<bool> pattern_matches(const std::string& pattern, const std::string& key) {
    try {
      return std::regex_search(key, std::regex(pattern, std::regex::ECMAScript));
    } catch (const std::regex_error&) {
      return std::nullopt;
    }
  }

  bool pattern_properties(json& s, const std::string& ptr) {
    json& pp = s["patternProperties"];
    const std::string pp_ptr = ptr + "/patternProperties";
    if (!pp.is_object()) return true;  // the subset check refuses it
    if (pp.empty()) {
      s.erase("patternProperties");
      return true;
    }
    const bool all_match_all = std::all_of(pp.items().begin(), pp.items().end(),
                                           [](const auto& kv) { return in(kMatchAll, kv.key()); });
    auto addl = s.find("additionalProperties");
    const bool addl_false = addl != s.end() ? (addl->is_boolean() && !addl->get<bool>()) : strict_;
    if (!all_match_all && !(pp.size() == 1 && !addl_false)) {
      // One pattern with additionalProperties false, nothing named: the engine's own handling
      // (keys matching the pattern in full). Otherwise left for the subset check to refuse.
      if (addl == s.end() && addl_false) s["additionalProperties"] = false;  // strict's absent
      return true;
    }
    // The schema every key matched by the patterns must satisfy, and the named properties.
    json combined = true;
    try {
      for (const auto& [pattern, sub] : pp.items()) combined = merge(combined, sub, 0);
      if (s.contains("properties") && s["properties"].is_object()) {
        for (auto& [name, sub] : s["properties"].items()) {
          for (const auto& [pattern, psub] : pp.items()) {
            const auto m = pattern_matches(pattern, name);
            if (!m) {
              return refuse(pp_ptr + "/" + escape(pattern),
                            "the pattern is not an ECMAScript regular expression");
            }
            if (*m) sub = merge(sub, psub, 0);
          }
          open_additional(sub);
        }
      }
      json rest =
          all_match_all ? json(true) : (addl != s.end() ? *addl : json(true));  // not false here
      s["additionalProperties"] = merge(combined, rest, 0);
      open_additional(s["additionalProperties"]);
    } catch (const Unsatisfiable& u) {
      return refuse(pp_ptr, u.message);
    } catch (const SchemaRefusal& r) {
      return refuse(pp_ptr, r.message);
    }
    s.erase("patternProperties");
    return true;
  }

  /// The target of a local $ref in the schema as given; throws SchemaRefusal when it is not one.
  const json& resolve(const std::string& ref) const {
    if (ref == "#") return root_;
    if (ref.rfind("#/", 0) != 0) {
      throw SchemaRefusal{"", "$ref " + ref + " in allOf is not local"};
    }
    try {
      return root_.at(json::json_pointer(ref.substr(1)));
    } catch (const nlohmann::json::exception&) {
      throw SchemaRefusal{"", "$ref " + ref + " does not resolve in the schema"};
    }
  }

  /// Draft 4-7 tuples: "items" as an array is prefixItems, and "additionalItems" then is "items"
  /// (absent or true: any further items); "additionalItems" beside no array is ignored, as the
  /// drafts say. Exact.
  static void tuple_items(json& s) {
    auto items = s.find("items");
    if (items == s.end() || !items->is_array()) {
      s.erase("additionalItems");
      return;
    }
    if (s.contains("prefixItems")) return;  // both: the subset check refuses the array
    json tuple = *items;
    json rest = s.contains("additionalItems") ? s["additionalItems"] : json(true);
    s.erase("additionalItems");
    s["items"] = std::move(tuple);
    json out = json::object();
    for (auto& [k, v] : s.items()) {
      if (k == "items") {
        out["prefixItems"] = v;
        if (!(rest.is_boolean() && rest.get<bool>())) out["items"] = rest;
      } else {
        out[k] = v;
      }
    }
    s = std::move(out);
  }

  /// $ref, anyOf or oneOf beside other assertions (or beside each other): their conjunction,
  /// merged as allOf members are (the engine would drop the siblings). For a $ref in drafts up
  /// to 7 (where its siblings are ignored) this is stricter; exact otherwise.
  bool merge_siblings(json& s, const std::string& ptr, int depth) {
    std::vector<std::string> heads;
    bool others = false;
    for (const auto& [k, v] : s.items()) {
      if (k == "$ref" || k == "anyOf" || k == "oneOf") {
        heads.push_back(k);
      } else if (!in(kAnnotations, k) && !k.empty() && k[0] != '$' && in_known(k)) {
        others = true;
      }
    }
    if (heads.empty() || (heads.size() == 1 && !others)) return true;
    json defs = json::object();
    json rest = json::object();
    for (const auto& [k, v] : s.items()) {
      if (k == "$defs" || k == "definitions") {
        defs[k] = v;
      } else if (std::find(heads.begin(), heads.end(), k) == heads.end()) {
        rest[k] = v;
      }
    }
    try {
      json merged = rest;
      for (const std::string& h : heads) {
        json member = json::object();
        member[h] = s[h];
        if (h == "$ref" && !inline_ref(member, ptr, depth)) return false;
        merged = merge(merged, member, depth);
      }
      if (!merged.is_object()) merged = json::object();
      for (const auto& [k, v] : defs.items()) merged[k] = v;
      s = std::move(merged);
    } catch (const Unsatisfiable& u) {
      return refuse(ptr + "/" + escape(heads.front()),
                    "it cannot hold together with the keywords beside it: " + u.message);
    } catch (const SchemaRefusal& r) {
      return refuse(ptr + "/" + escape(heads.front()),
                    r.message + " (merging the keywords beside it)");
    }
    return true;
  }

  /// Keywords that assert something (JSON Schema's applicators and validators).
  static bool in_known(const std::string& k) {
    static const std::set<std::string> known = {"type",
                                                "enum",
                                                "const",
                                                "properties",
                                                "required",
                                                "additionalProperties",
                                                "patternProperties",
                                                "items",
                                                "prefixItems",
                                                "minItems",
                                                "maxItems",
                                                "uniqueItems",
                                                "contains",
                                                "minLength",
                                                "maxLength",
                                                "pattern",
                                                "format",
                                                "minimum",
                                                "maximum",
                                                "exclusiveMinimum",
                                                "exclusiveMaximum",
                                                "multipleOf",
                                                "minProperties",
                                                "maxProperties",
                                                "propertyNames",
                                                "dependencies",
                                                "dependentRequired",
                                                "dependentSchemas",
                                                "not",
                                                "if",
                                                "then",
                                                "else",
                                                "allOf",
                                                "additionalItems",
                                                "unevaluatedProperties",
                                                "unevaluatedItems"};
    return known.count(k) != 0;
  }

  bool merge_all_of(json& s, const std::string& ptr, int depth) {
    const std::string all_ptr = ptr + "/allOf";
    json members = s["allOf"];
    if (!members.is_array() || members.empty()) return true;  // the subset check refuses it
    s.erase("allOf");
    // The definitions stay where local references find them, outside the merge.
    json defs = json::object();
    for (const char* k : {"$defs", "definitions"}) {
      if (s.contains(k)) {
        defs[k] = s[k];
        s.erase(k);
      }
    }
    try {
      json merged = s;  // the schema's own keywords are one more member
      for (size_t i = 0; i < members.size(); ++i) {
        json m = members[i];
        if (!inline_ref(m, all_ptr + "/" + std::to_string(i), depth)) return false;
        merged = merge(merged, m, depth);
      }
      s = std::move(merged);
      if (!s.is_object()) s = json::object();  // merged to `true`
      for (const auto& [k, v] : defs.items()) s[k] = v;
    } catch (const Unsatisfiable& u) {
      return refuse(all_ptr, "the allOf members cannot all hold: " + u.message);
    } catch (const SchemaRefusal& r) {
      return refuse(all_ptr, r.message + "; merge the members by hand");
    }
    return true;
  }

  /// A member {"$ref": R, ...}: R's schema (rewritten) merged with the rest of the member.
  bool inline_ref(json& m, const std::string& ptr, int depth) {
    for (int hops = 0; m.is_object() && m.contains("$ref") && m["$ref"].is_string(); ++hops) {
      if (hops > kMaxSchemaDepth) return refuse(ptr, "$ref chain too long in allOf");
      json target = resolve(m["$ref"].get<std::string>());
      if (!node(target, ptr + "/$ref", depth + 1)) return false;
      m.erase("$ref");
      m = merge(m, target, depth);
    }
    return true;
  }

  static bool is_annotation_only(const json& s) {
    if (s.is_boolean()) return s.get<bool>();
    return std::all_of(s.items().begin(), s.items().end(),
                       [](const auto& kv) { return in(kAnnotations, kv.key()); });
  }

  /// `s` with its $ref (if any) resolved and merged with the keywords beside it.
  json without_ref(const json& s, int depth) {
    if (!s.contains("$ref")) return s;
    if (!s.at("$ref").is_string()) throw SchemaRefusal{"", "$ref must be a string"};
    const json target = resolve(s.at("$ref").get<std::string>());
    if (target.is_object() && target.contains("allOf")) {
      throw SchemaRefusal{"", "a $ref to a schema with allOf inside allOf"};
    }
    json rest = s;
    rest.erase("$ref");
    return merge(rest, target, depth + 1);
  }

  /// a AND b as one schema. Throws Unsatisfiable, or SchemaRefusal when it cannot merge exactly.
  json merge(const json& a, const json& b, int depth) {
    if (++work_ > kMaxWork) throw SchemaRefusal{"", too_much()};
    if (depth > kMaxSchemaDepth) throw SchemaRefusal{"", "allOf merges nest too deep"};
    if (a.is_boolean()) {
      if (!a.get<bool>()) throw Unsatisfiable{"a member is false"};
      return b;
    }
    if (b.is_boolean()) {
      if (!b.get<bool>()) throw Unsatisfiable{"a member is false"};
      return a;
    }
    if (!a.is_object() || !b.is_object()) throw SchemaRefusal{"", "a member is not a schema"};
    if (is_annotation_only(b)) return a;
    if (is_annotation_only(a)) return b;
    const json mb = without_ref(b, depth);
    json out = without_ref(a, depth);
    merge_objects(out, mb, depth);
    for (const auto& [key, value] : mb.items()) {
      if (key == "properties" || key == "additionalProperties" || key == "patternProperties" ||
          key == "anyOf" || key == "oneOf") {
        continue;  // done by merge_objects / distribute
      }
      auto it = out.find(key);
      if (it == out.end()) {
        out[key] = value;
        continue;
      }
      if (*it == value || in(kAnnotations, key)) continue;
      merge_keyword(out, key, value, depth);
    }
    required_reachable(out);
    return distribute(out, mb, depth);
  }

  static void merge_required(json& out, const json& value) {
    if (!value.is_array() || !out["required"].is_array()) {
      throw SchemaRefusal{"", "required must be an array"};
    }
    for (const auto& r : value) {
      if (std::find(out["required"].begin(), out["required"].end(), r) == out["required"].end()) {
        out["required"].push_back(r);
      }
    }
  }

  static void merge_enum(json& out, const json& value) {
    if (!value.is_array() || !out["enum"].is_array()) {
      throw SchemaRefusal{"", "enum must be an array"};
    }
    json both = json::array();
    for (const auto& v : out["enum"]) {
      if (std::find(value.begin(), value.end(), v) != value.end()) both.push_back(v);
    }
    if (both.empty()) throw Unsatisfiable{"their enum values have none in common"};
    out["enum"] = both;
  }

  static void merge_bound(json& out, const std::string& key, const json& value) {
    if (!value.is_number() || !out[key].is_number()) {
      throw SchemaRefusal{"", key + " must be a number"};
    }
    const bool lower = in(kLower, key);
    const bool take = lower ? value.get<double>() > out[key].get<double>()
                            : value.get<double>() < out[key].get<double>();
    if (take) out[key] = value;
  }

  void merge_keyword(json& out, const std::string& key, const json& value, int depth) {
    if (key == "type") {
      const auto t = intersect_types(type_set(out), type_set(json{{"type", value}}));
      if (t.empty()) throw Unsatisfiable{"their types do not intersect"};
      out["type"] =
          t.size() == 1 ? json(*t.begin()) : json(std::vector<std::string>(t.begin(), t.end()));
    } else if (key == "required") {
      merge_required(out, value);
    } else if (key == "enum") {
      merge_enum(out, value);
    } else if (key == "const") {
      throw Unsatisfiable{"their const values differ"};
    } else if (in(kLower, key) || in(kUpper, key)) {
      merge_bound(out, key, value);
    } else if (key == "items") {
      if (out["items"].is_array() || value.is_array()) {
        throw SchemaRefusal{"", "items arrays in more than one member"};
      }
      out["items"] = merge(out["items"], value, depth + 1);
    } else {
      throw SchemaRefusal{"", "two members give different \"" + key + "\" values"};
    }
  }

  /// properties and additionalProperties of b into out (a member that does not list a property
  /// constrains it by its additionalProperties).
  void merge_objects(json& out, const json& b, int depth) {
    const bool a_obj = out.contains("properties") || out.contains("additionalProperties") ||
                       out.contains("patternProperties");
    const bool b_obj = b.contains("properties") || b.contains("additionalProperties") ||
                       b.contains("patternProperties");
    if (!b_obj) return;
    if (!a_obj) {
      for (const char* k : {"properties", "additionalProperties", "patternProperties"}) {
        if (b.contains(k)) out[k] = b.at(k);
      }
      return;
    }
    if (out.contains("patternProperties") || b.contains("patternProperties")) {
      throw SchemaRefusal{"", "patternProperties beside the object keywords of another member"};
    }
    const json empty = json::object();
    const json& pa = out.contains("properties") ? out["properties"] : empty;
    const json& pb = b.contains("properties") ? b.at("properties") : empty;
    if (!pa.is_object() || !pb.is_object()) throw SchemaRefusal{"", "properties must be an object"};
    const json* addl_a =
        out.contains("additionalProperties") ? &out["additionalProperties"] : nullptr;
    const json* addl_b =
        b.contains("additionalProperties") ? &b.at("additionalProperties") : nullptr;
    json props = merged_properties(pa, addl_a, pb, addl_b, depth);
    std::optional<json> addl = merged_additional(addl_a, addl_b, depth);
    // A property that cannot be present: dropped when every other key is refused too (the engine
    // then refuses it as an additional key), else the merge is refused.
    const bool addl_false = addl && addl->is_boolean() && !addl->get<bool>();
    json kept = json::object();
    for (const auto& [name, sub] : props.items()) {
      if (!(sub.is_boolean() && !sub.get<bool>())) {
        kept[name] = sub;
      } else if (!addl_false) {
        throw SchemaRefusal{"", "property \"" + name + "\" is forbidden by one member only"};
      }
    }
    if (kept.empty()) {
      out.erase("properties");
    } else {
      out["properties"] = std::move(kept);
    }
    if (addl) {
      out["additionalProperties"] = *addl;
    } else {
      out.erase("additionalProperties");
    }
  }

  /// Per property of either side: both sides' conditions on it (a side that does not list it
  /// gives its additionalProperties, or nothing); false where they cannot hold together.
  json merged_properties(const json& pa, const json* addl_a, const json& pb, const json* addl_b,
                         int depth) {
    auto part = [](const json& p, const json* addl, const std::string& name) -> json {
      if (p.contains(name)) return p.at(name);
      return addl != nullptr ? *addl : json(true);
    };
    std::vector<std::string> names;
    for (const auto& [k, v] : pa.items()) names.push_back(k);
    for (const auto& [k, v] : pb.items()) {
      if (!pa.contains(k)) names.push_back(k);
    }
    json props = json::object();
    for (const std::string& name : names) {
      try {
        props[name] = merge(part(pa, addl_a, name), part(pb, addl_b, name), depth + 1);
      } catch (const Unsatisfiable&) {
        props[name] = false;  // the property cannot be present
      }
    }
    return props;
  }

  std::optional<json> merged_additional(const json* addl_a, const json* addl_b, int depth) {
    if (addl_a != nullptr && addl_b != nullptr) {
      try {
        return merge(*addl_a, *addl_b, depth + 1);
      } catch (const Unsatisfiable&) {
        return json(false);
      }
    }
    if (addl_a != nullptr) return *addl_a;
    if (addl_b != nullptr) return *addl_b;
    return std::nullopt;
  }

  /// A required property that additionalProperties false forbids: nothing can satisfy it.
  static void required_reachable(const json& s) {
    auto req = s.find("required");
    auto addl = s.find("additionalProperties");
    if (req == s.end() || !req->is_array() || addl == s.end() ||
        !(addl->is_boolean() && !addl->get<bool>())) {
      return;
    }
    for (const auto& r : *req) {
      if (!r.is_string()) continue;
      auto p = s.find("properties");
      if (p == s.end() || !p->is_object() || !p->contains(r.get<std::string>())) {
        throw Unsatisfiable{"property " + r.dump() + " is required but not allowed"};
      }
    }
  }

  /// anyOf / oneOf of both sides, distributed over the other keywords of `out`.
  json distribute(json& out, const json& b, int depth) {
    std::vector<std::pair<std::string, json>> combinators;
    for (const json* side : {static_cast<const json*>(&out), &b}) {
      for (const char* k : {"anyOf", "oneOf"}) {
        if (side->contains(k)) combinators.emplace_back(k, side->at(k));
      }
    }
    out.erase("anyOf");
    out.erase("oneOf");
    if (combinators.empty()) return out;
    for (const auto& [kind, alts] : combinators) {
      if (!alts.is_array() || alts.empty()) throw SchemaRefusal{"", kind + " must be an array"};
      if (alts.size() > 16) throw SchemaRefusal{"", kind + " with more than 16 alternatives"};
    }
    const std::string kind = combinators.front().first;
    const json alts = product(combinators, depth);
    if (is_annotation_only(out)) {
      out[kind] = alts;
      return out;
    }
    json plain = out;  // without the definitions, which stay outside
    plain.erase("$defs");
    plain.erase("definitions");
    json merged = json::array();
    for (const auto& alt : alts) {
      try {
        merged.push_back(merge(plain, alt, depth + 1));
      } catch (const Unsatisfiable&) {
        // this alternative can never hold together with the rest: it adds nothing
      }
    }
    if (merged.empty()) throw Unsatisfiable{"no " + kind + " alternative fits the other members"};
    json result = json::object();
    for (const auto& [k, v] : out.items()) {
      if (in(kAnnotations, k)) result[k] = v;  // $defs / definitions stay reachable
    }
    result[kind] = merged;
    return result;
  }

  /// anyOf[B..] and anyOf[C..]: anyOf of every (B and C) pair that can hold. A oneOf takes no
  /// partner here.
  json product(const std::vector<std::pair<std::string, json>>& combinators, int depth) {
    json alts = combinators.front().second;
    for (size_t c = 1; c < combinators.size(); ++c) {
      if (combinators.front().first != "anyOf" || combinators[c].first != "anyOf") {
        throw SchemaRefusal{"", "a oneOf beside another anyOf / oneOf among the members"};
      }
      json pairs = json::array();
      for (const auto& x : alts) {
        for (const auto& y : combinators[c].second) {
          try {
            pairs.push_back(merge(x, y, depth + 1));
          } catch (const Unsatisfiable&) {
            // this pair can never hold: it adds nothing
          }
        }
      }
      if (pairs.empty()) throw Unsatisfiable{"no pair of anyOf alternatives can hold together"};
      if (pairs.size() > 64) throw SchemaRefusal{"", "anyOf alternatives multiply past 64"};
      alts = std::move(pairs);
    }
    return alts;
  }

  static std::string too_much() {
    return "resolving its allOf / $ref takes more than " + std::to_string(kMaxWork) +
           " steps; simplify the schema";
  }

  /// Schemas visited and merges done, at most kMaxWork: references that fan out (A = allOf of B
  /// twice, B = allOf of C twice, ...) would otherwise take exponential time.
  static constexpr int kMaxWork = 200000;
  int work_ = 0;
  const json& root_;
  std::optional<nlohmann::json> plain_root_;  // root_ as nlohmann::json, for schema_eval
  bool strict_;
  SchemaRefusal& why_;
};

}  // namespace

namespace {

/// A $ref the rewrite keeps meaning the same schema (or a stricter one): "#", or a path through
/// definitions and properties only ("#/$defs/a/properties/b"), positions the rewrite keeps.
bool stable_ref(const std::string& ref) {
  if (ref == "#") return true;
  if (ref.rfind("#/", 0) != 0) return true;  // not local: the subset check refuses it
  size_t pos = 2;
  bool container = true;
  while (pos <= ref.size()) {
    const size_t slash = std::min(ref.find('/', pos), ref.size());
    const std::string token = ref.substr(pos, slash - pos);
    if (container && token != "$defs" && token != "definitions" && token != "properties") {
      return false;
    }
    container = !container;
    pos = slash + 1;
  }
  return container;  // ends on a name (the next token would be a container)
}

bool refs_stable(const json& s, const std::string& ptr, SchemaRefusal& why) {
  if (s.is_object()) {
    for (const auto& [k, v] : s.items()) {
      if (k == "$ref" && v.is_string() && !stable_ref(v.get<std::string>())) {
        why.pointer = ptr + "/$ref";
        why.message = "$ref " + v.dump() +
                      " points into a part of the schema that is rewritten (allOf merged, "
                      "items as prefixItems, ...); point it at a schema under $defs";
        return false;
      }
      if (!refs_stable(v, ptr + "/" + escape(k), why)) return false;
    }
  } else if (s.is_array()) {
    for (size_t i = 0; i < s.size(); ++i) {
      if (!refs_stable(s[i], ptr + "/" + std::to_string(i), why)) return false;
    }
  }
  return true;
}

}  // namespace

bool rewrite_schema(nlohmann::ordered_json& schema, bool strict, SchemaRefusal& why) {
  const nlohmann::ordered_json root = schema;
  if (!Rewriter(root, strict, why).node(schema, "", 0)) return false;
  // A $ref into a restructured part would now find another schema, or none.
  return schema == root || refs_stable(root, "", why);
}

std::string ecmascript_dots(const std::string& pattern) {
  std::string out;
  bool in_class = false;
  for (size_t i = 0; i < pattern.size(); ++i) {
    const char c = pattern[i];
    if (c == '\\' && i + 1 < pattern.size()) {
      out += c;
      out += pattern[++i];
      continue;
    }
    if (in_class) {
      if (c == ']') in_class = false;
    } else if (c == '[') {
      in_class = true;
      out += c;
      if (i + 1 < pattern.size() && pattern[i + 1] == '^') out += pattern[++i];
      if (i + 1 < pattern.size() && pattern[i + 1] == ']')
        out += pattern[++i];  // "[]...]": literal
      continue;
    } else if (c == '.') {
      out += "[^\\n\\r\\u2028\\u2029]";
      continue;
    }
    out += c;
  }
  return out;
}

const char* date_pattern() {
  return kDatePattern;
}

const char* date_time_pattern() {
  return kDateTimePattern;
}

}  // namespace plinth::grammar
