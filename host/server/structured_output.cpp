#include "server/structured_output.hpp"

#include <algorithm>
#include <cctype>

#include "chat/ordered_json.hpp"
#include "server/api_error.hpp"
#include "server/tool_request.hpp"

namespace plinth::server {

namespace {

using nlohmann::json;

// Deeper schemas are refused before anything walks them: dump() and the grammar plugin recurse
// (100,000 nested arrays overflowed a network thread's stack), and the plugin refuses schemas
// nested deeper than 64 schema levels anyway.
void check_nesting(const json& schema, const std::string& field) {
  if (json_nesting(schema) > kMaxToolNesting) {
    throw ApiError::invalid(
        field, field + ": nested deeper than " + std::to_string(kMaxToolNesting) + " levels");
  }
}

GrammarSpec json_schema_spec(const json& schema, const std::string& field, bool strict) {
  GrammarSpec g;
  g.kind = PLINTH_GRAMMAR_JSON_SCHEMA;
  g.strict = strict;
  if (schema.is_string()) {  // vLLM accepts the schema as JSON text too
    const json parsed = json::parse(schema.get<std::string>(), nullptr, false);
    if (parsed.is_discarded() || !(parsed.is_object() || parsed.is_boolean())) {
      throw ApiError::invalid(field, field + ": not a JSON Schema (an object, or its JSON text)");
    }
    check_nesting(parsed, field);
    g.spec = parsed.dump();
  } else if (schema.is_object() || schema.is_boolean()) {
    check_nesting(schema, field);
    g.spec = schema.dump();
  } else {
    throw ApiError::unprocessable(
        field, field + ": expected a JSON Schema object, got " + std::string(schema.type_name()));
  }
  return g;
}

std::optional<GrammarSpec> response_format(const json& rf) {
  if (!rf.is_object()) {
    throw ApiError::unprocessable("response_format", "response_format: expected an object, got " +
                                                         std::string(rf.type_name()));
  }
  const auto type = rf.find("type");
  if (type == rf.end() || !type->is_string()) {
    throw ApiError::unprocessable("response_format.type",
                                  "response_format.type: expected \"text\", \"json_object\" or "
                                  "\"json_schema\"");
  }
  const std::string t = type->get<std::string>();
  if (t == "text") return std::nullopt;
  if (t == "json_object") {
    GrammarSpec g;
    g.kind = PLINTH_GRAMMAR_JSON_OBJECT;
    return g;
  }
  if (t != "json_schema") {
    throw ApiError::invalid("response_format.type",
                            "response_format.type: \"" + t +
                                "\" is not one of \"text\", \"json_object\", \"json_schema\"");
  }
  const auto js = rf.find("json_schema");
  if (js == rf.end() || !js->is_object()) {
    throw ApiError::unprocessable("response_format.json_schema",
                                  "response_format.json_schema: required with type "
                                  "\"json_schema\": {\"name\", \"schema\", \"strict\"}");
  }
  const auto name = js->find("name");
  if (name == js->end() || !name->is_string() || name->get<std::string>().empty()) {
    throw ApiError::unprocessable("response_format.json_schema.name",
                                  "response_format.json_schema.name: required, a non-empty "
                                  "string");
  }
  // OpenAI's rule for the name: letters, digits, '_' and '-', at most 64 characters.
  const std::string& n = name->get_ref<const std::string&>();
  const bool name_ok = n.size() <= 64 && std::all_of(n.begin(), n.end(), [](unsigned char c) {
                         return std::isalnum(c) != 0 || c == '_' || c == '-';
                       });
  if (!name_ok) {
    throw ApiError::invalid("response_format.json_schema.name",
                            "response_format.json_schema.name: use at most 64 letters, digits, "
                            "'_' or '-' (as OpenAI requires)");
  }
  bool strict = false;
  if (auto s = js->find("strict"); s != js->end() && !s->is_null()) {
    if (!s->is_boolean()) {
      throw ApiError::unprocessable("response_format.json_schema.strict",
                                    "response_format.json_schema.strict: expected a boolean");
    }
    strict = s->get<bool>();
  }
  const auto schema = js->find("schema");
  if (schema == js->end() || schema->is_null()) {
    // OpenAI's schema is optional: without one, any JSON object.
    GrammarSpec g;
    g.kind = PLINTH_GRAMMAR_JSON_OBJECT;
    return g;
  }
  return json_schema_spec(*schema, "response_format.json_schema.schema", strict);
}

// A wrong type is a 422, a value of the right type the engine cannot use a 400 (as for every
// other constraint and field).
GrammarSpec string_spec(int32_t kind, const json& v, const std::string& field) {
  if (!v.is_string()) {
    throw ApiError::unprocessable(
        field, field + ": expected a non-empty string, got " + std::string(v.type_name()));
  }
  if (v.get<std::string>().empty()) {
    throw ApiError::invalid(field, field + ": empty; expected a non-empty string");
  }
  GrammarSpec g;
  g.kind = kind;
  g.spec = v.get<std::string>();
  return g;
}

GrammarSpec choice_spec(const json& v, const std::string& field) {
  if (!v.is_array()) {
    throw ApiError::unprocessable(field, field + ": expected a non-empty array of strings, got " +
                                             std::string(v.type_name()));
  }
  if (v.empty()) {
    throw ApiError::invalid(field, field + ": empty; give at least one choice");
  }
  for (size_t i = 0; i < v.size(); ++i) {
    if (!v[i].is_string()) {
      const std::string at = field + "[" + std::to_string(i) + "]";
      throw ApiError::unprocessable(at, at + ": expected a string");
    }
  }
  GrammarSpec g;
  g.kind = PLINTH_GRAMMAR_CHOICE;
  g.spec = v.dump();
  return g;
}

/// One member of structured_outputs; nullopt for one that asks for nothing (json_object: false).
std::optional<GrammarSpec> structured_output_member(const std::string& key, const json& v) {
  const std::string field = "structured_outputs." + key;
  if (key == "json") return json_schema_spec(v, field, false);
  if (key == "regex") return string_spec(PLINTH_GRAMMAR_REGEX, v, field);
  if (key == "grammar") return string_spec(PLINTH_GRAMMAR_EBNF, v, field);
  if (key == "choice") return choice_spec(v, field);
  if (key == "json_object") {
    if (v != true) return std::nullopt;
    GrammarSpec g;
    g.kind = PLINTH_GRAMMAR_JSON_OBJECT;
    return g;
  }
  throw ApiError::invalid(field, field +
                                     ": unknown; structured_outputs takes one of json, regex, "
                                     "choice, grammar, json_object");
}

GrammarSpec structured_outputs(const json& so) {
  if (!so.is_object()) {
    throw ApiError::unprocessable(
        "structured_outputs",
        "structured_outputs: expected an object, got " + std::string(so.type_name()));
  }
  std::optional<GrammarSpec> out;
  for (const auto& [key, v] : so.items()) {
    if (v.is_null()) continue;
    std::optional<GrammarSpec> g = structured_output_member(key, v);
    if (!g) continue;
    if (out) {
      throw ApiError::invalid("structured_outputs." + key,
                              "structured_outputs: give exactly one of json, regex, choice, "
                              "grammar");
    }
    out = std::move(g);
  }
  if (!out) {
    throw ApiError::invalid("structured_outputs",
                            "structured_outputs: give one of json, regex, choice, grammar");
  }
  return *out;
}

}  // namespace

std::optional<GrammarSpec> parse_structured_output(const json& body, std::string_view raw) {
  const auto rf = body.find("response_format");
  const auto so = body.find("structured_outputs");
  const bool has_rf = rf != body.end() && !rf->is_null();
  const bool has_so = so != body.end() && !so->is_null();
  if (has_rf && has_so) {
    throw ApiError::invalid("structured_outputs",
                            "give either response_format or structured_outputs, not both");
  }
  std::optional<GrammarSpec> g;
  if (has_so) g = structured_outputs(*so);
  if (has_rf) g = response_format(*rf);
  if (g && g->kind == PLINTH_GRAMMAR_JSON_SCHEMA) {
    // The same schema with its members in the request's order.
    // Linear time whatever the body holds (ordered_json.hpp).
    const auto ordered = parse_ordered_json(raw);
    const nlohmann::ordered_json* s = nullptr;
    if (has_so && ordered.contains("structured_outputs")) {
      s = &ordered["structured_outputs"]["json"];
    } else if (has_rf && ordered.contains("response_format")) {
      s = &ordered["response_format"]["json_schema"]["schema"];
    }
    if (s != nullptr && (s->is_object() || s->is_boolean()) &&
        json_nesting(*s) <= kMaxToolNesting) {
      g->spec = s->dump();
    }
  }
  return g;
}

}  // namespace plinth::server
