#include "runtime/json_schema.hpp"

#include <algorithm>
#include <cmath>
#include <set>

namespace plinth {

using nlohmann::json;

namespace {

const std::set<std::string, std::less<>> kKeywords = {"type",
                                                      "enum",
                                                      "minimum",
                                                      "maximum",
                                                      "exclusiveMinimum",
                                                      "exclusiveMaximum",
                                                      "required",
                                                      "items",
                                                      "properties",
                                                      "description",
                                                      "additionalProperties",
                                                      "default",
                                                      "title",
                                                      "$schema",
                                                      "$comment",
                                                      "x-power-of-two"};
const std::set<std::string, std::less<>> kTypes = {"object", "array",   "string", "integer",
                                                   "number", "boolean", "null"};

bool is_integer(const json& v) {
  if (v.is_number_integer()) return true;
  if (!v.is_number_float()) return false;
  double d = v.get<double>();
  return std::isfinite(d) && std::floor(d) == d;
}

bool has_type(const json& v, std::string_view type) {
  if (type == "object") return v.is_object();
  if (type == "array") return v.is_array();
  if (type == "string") return v.is_string();
  if (type == "integer") return is_integer(v);
  if (type == "number") return v.is_number();
  if (type == "boolean") return v.is_boolean();
  if (type == "null") return v.is_null();
  return false;
}

std::string article(std::string_view type) {
  return (type == "object" || type == "array" || type == "integer") ? "an " : "a ";
}

// "an integer" / "a string or null".
std::string describe_types(const json& type) {
  if (type.is_string()) return article(type.get<std::string>()) + type.get<std::string>();
  std::string out;
  for (size_t i = 0; i < type.size(); ++i) {
    if (i > 0) out += i + 1 == type.size() ? " or " : ", ";
    out += (i == 0 ? article(type[i].get<std::string>()) : "") + type[i].get<std::string>();
  }
  return out;
}

std::string json_type_of(const json& v) {
  if (v.is_number_integer()) return "integer";
  if (v.is_number_float()) return "number";
  return v.type_name();
}

// A value for messages: short JSON, cut when long.
std::string show(const json& v) {
  std::string s = v.dump();
  return s.size() > 60 ? s.substr(0, 57) + "..." : s;
}

std::string show_number(const json& v) {
  return v.dump();
}

bool is_power_of_two(const json& v) {
  if (!is_integer(v)) return false;
  double d = v.get<double>();
  if (d < 1) return false;
  auto u = static_cast<uint64_t>(d);
  return (u & (u - 1)) == 0;
}

// The range part of a message from minimum/maximum/exclusive*, lower bound first: "between 1 and
// 256", ">= 1", "> 0 and <= 1".
std::string describe_range(const json& s) {
  bool lo = s.contains("minimum"), hi = s.contains("maximum");
  if (lo && hi && !s.contains("exclusiveMinimum") && !s.contains("exclusiveMaximum")) {
    return "between " + show_number(s["minimum"]) + " and " + show_number(s["maximum"]);
  }
  std::vector<std::string> parts;
  if (lo) parts.push_back(">= " + show_number(s["minimum"]));
  if (s.contains("exclusiveMinimum")) parts.push_back("> " + show_number(s["exclusiveMinimum"]));
  if (hi) parts.push_back("<= " + show_number(s["maximum"]));
  if (s.contains("exclusiveMaximum")) parts.push_back("< " + show_number(s["exclusiveMaximum"]));
  std::string out;
  for (size_t i = 0; i < parts.size(); ++i) out += (i > 0 ? " and " : "") + parts[i];
  return out;
}

bool in_range(const json& s, double d) {
  if (s.contains("minimum") && d < s["minimum"].get<double>()) return false;
  if (s.contains("maximum") && d > s["maximum"].get<double>()) return false;
  if (s.contains("exclusiveMinimum") && d <= s["exclusiveMinimum"].get<double>()) return false;
  if (s.contains("exclusiveMaximum") && d >= s["exclusiveMaximum"].get<double>()) return false;
  return true;
}

std::string allowed_keys(const json& schema) {
  if (!schema.contains("properties") || schema["properties"].empty()) return "none";
  std::string out;
  for (const auto& [k, _] : schema["properties"].items()) out += (out.empty() ? "" : ", ") + k;
  return out;
}

}  // namespace

std::string json_path_key(const std::string& path, const std::string& key) {
  bool ident = !key.empty() && std::all_of(key.begin(), key.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
           c == '-';
  });
  if (ident) return path.empty() ? key : path + "." + key;
  return path + "[" + json(key).dump() + "]";
}

std::string json_path_index(const std::string& path, size_t index) {
  return path + "[" + std::to_string(index) + "]";
}

namespace {

bool is_bound_keyword(std::string_view key) {
  return key == "minimum" || key == "maximum" || key == "exclusiveMinimum" ||
         key == "exclusiveMaximum";
}

bool is_string_array(const json& value) {
  return value.is_array() &&
         std::all_of(value.begin(), value.end(), [](const json& v) { return v.is_string(); });
}

// Checks one keyword of a schema at `at` (its JSON path); recurses into sub-schemas.
void check_keyword(const std::string& key, const json& value, const std::string& at) {
  if (!kKeywords.contains(key)) {
    throw SchemaError(at, "keyword '" + key +
                              "' is not in the subset the host validates (type, enum, minimum, "
                              "maximum, exclusiveMinimum, exclusiveMaximum, required, "
                              "additionalProperties, default, items, properties, description, "
                              "x-power-of-two)");
  }
  if (key == "type") {
    json types = value.is_array() ? value : json::array({value});
    for (const json& t : types) {
      if (!t.is_string() || !kTypes.contains(t.get<std::string>())) {
        throw SchemaError(at, "unknown type " + show(t));
      }
    }
  } else if (key == "enum" && (!value.is_array() || value.empty())) {
    throw SchemaError(at, "must be a non-empty array");
  } else if (is_bound_keyword(key) && !value.is_number()) {
    throw SchemaError(at, "must be a number");
  } else if (key == "required" && !is_string_array(value)) {
    throw SchemaError(at, "must be an array of strings");
  } else if (key == "properties") {
    if (!value.is_object()) throw SchemaError(at, "must be an object");
    for (const auto& [name, sub] : value.items()) check_schema(sub, json_path_key(at, name));
  } else if (key == "items" || key == "additionalProperties") {
    check_schema(value, at);
  } else if (key == "x-power-of-two" && !value.is_boolean()) {
    throw SchemaError(at, "must be a boolean");
  }
}

}  // namespace

void check_schema(const json& schema, const std::string& path) {
  if (schema.is_boolean()) return;  // true: any value, false: none
  if (!schema.is_object()) throw SchemaError(path, "a schema must be an object or a boolean");
  for (const auto& [key, value] : schema.items())
    check_keyword(key, value, json_path_key(path, key));
  if (schema.contains("default")) {
    json copy = schema["default"];
    json rest = schema;
    rest.erase("default");
    validate_json(rest, copy, json_path_key(path, "default"));
  }
}

namespace {

// The steps of validate_json, each for one group of keywords.

void validate_type(const json& schema, const json& instance, const std::string& path) {
  if (!schema.contains("type")) return;
  const json& type = schema["type"];
  json types = type.is_array() ? type : json::array({type});
  bool ok = std::any_of(types.begin(), types.end(),
                        [&](const json& t) { return has_type(instance, t.get<std::string>()); });
  if (!ok) {
    throw SchemaError(path, "must be " + describe_types(type) + ", got " + json_type_of(instance) +
                                " " + show(instance));
  }
}

void validate_enum(const json& schema, const json& instance, const std::string& path) {
  if (!schema.contains("enum")) return;
  const json& allowed = schema["enum"];
  if (std::find(allowed.begin(), allowed.end(), instance) == allowed.end()) {
    std::string list;
    for (const json& a : allowed) list += (list.empty() ? "" : ", ") + a.dump();
    throw SchemaError(path, "must be one of " + list + ", got " + show(instance));
  }
}

// minimum/maximum/exclusive* and x-power-of-two of a number.
void validate_number(const json& schema, const json& instance, const std::string& path) {
  double d = instance.get<double>();
  bool pow2 = schema.value("x-power-of-two", false);
  std::string range = describe_range(schema);
  if (pow2 && (!is_power_of_two(instance) || !in_range(schema, d))) {
    throw SchemaError(path, "must be a power of two" + (range.empty() ? "" : " " + range) +
                                ", got " + show(instance));
  }
  if (!in_range(schema, d)) {
    throw SchemaError(path, "must be " + range + ", got " + show(instance));
  }
}

void validate_required(const json& schema, const json& instance, const std::string& path) {
  if (!schema.contains("required")) return;
  for (const json& r : schema["required"]) {
    const std::string& name = r.get_ref<const std::string&>();
    if (!instance.contains(name)) {
      throw SchemaError(json_path_key(path, name), "required option is missing");
    }
  }
}

// Each member through its property's schema, or additionalProperties for one not listed.
void validate_members(const json& schema, json& instance, const std::string& path) {
  const json* props = schema.contains("properties") ? &schema["properties"] : nullptr;
  for (auto& [key, value] : instance.items()) {
    if (props != nullptr && props->contains(key)) {
      validate_json((*props)[key], value, json_path_key(path, key));
      continue;
    }
    const json additional = schema.value("additionalProperties", json(true));
    if (additional.is_boolean() && !additional.get<bool>()) {
      throw SchemaError(json_path_key(path, key),
                        "unknown option; allowed: " + allowed_keys(schema));
    }
    validate_json(additional, value, json_path_key(path, key));
  }
}

// Adds the default of each absent property that has one.
void fill_defaults(const json& schema, json& instance, const std::string& path) {
  if (!schema.contains("properties")) return;
  for (const auto& [key, sub] : schema["properties"].items()) {
    if (instance.contains(key) || !sub.contains("default")) continue;
    // The default itself may be an object whose properties have defaults: fill those too.
    instance[key] = sub["default"];
    validate_json(sub, instance[key], json_path_key(path, key));
  }
}

void validate_items(const json& schema, json& instance, const std::string& path) {
  if (!schema.contains("items")) return;
  for (size_t i = 0; i < instance.size(); ++i) {
    validate_json(schema["items"], instance[i], json_path_index(path, i));
  }
}

}  // namespace

void validate_json(const json& schema, json& instance, const std::string& path) {
  if (schema.is_boolean()) {
    if (!schema.get<bool>())
      throw SchemaError(path, "no value is allowed here, got " + show(instance));
    return;
  }
  validate_type(schema, instance, path);
  validate_enum(schema, instance, path);
  if (instance.is_number()) validate_number(schema, instance, path);
  if (instance.is_object()) {
    validate_required(schema, instance, path);
    validate_members(schema, instance, path);
    fill_defaults(schema, instance, path);
  }
  if (instance.is_array()) validate_items(schema, instance, path);
}

}  // namespace plinth
