#include "server/tool_envelope.hpp"

#include <functional>
#include <map>
#include <utility>

namespace plinth::server {

namespace {

using nlohmann::ordered_json;

// Keywords whose values are data, not schemas: never walked.
bool is_data_keyword(const std::string& key) {
  return key == "enum" || key == "const" || key == "default" || key == "examples";
}

// OpenAI's strict mode on one schema: an object schema without additionalProperties gets false
// (as the grammar plugin's strict option reads an absent one), a prefixItems array without items
// gets items false; applied through every subschema. Schemas under a combinator keep their shape
// (the plugin enforces a combinator alone).
void close_schema(ordered_json& s) {
  if (!s.is_object()) return;
  const bool combinator =
      s.contains("$ref") || s.contains("anyOf") || s.contains("oneOf") || s.contains("allOf");
  if (!combinator && s.contains("type") && s["type"] == "object" &&
      !s.contains("additionalProperties")) {
    s["additionalProperties"] = false;
  }
  if (!combinator && s.contains("type") && s["type"] == "array" && s.contains("prefixItems") &&
      !s.contains("items")) {
    s["items"] = false;
  }
  for (auto& [key, v] : s.items()) {
    if (is_data_keyword(key)) continue;
    if (key == "properties" || key == "$defs" || key == "definitions") {
      if (v.is_object()) {
        for (auto& [name, sub] : v.items()) close_schema(sub);
      }
    } else if (key == "anyOf" || key == "oneOf" || key == "allOf" || key == "prefixItems") {
      if (v.is_array()) {
        for (auto& sub : v) close_schema(sub);
      }
    } else if (key == "items" || key == "additionalProperties") {
      close_schema(v);
    }
  }
}

// Whether `s` holds a "$ref" keyword anywhere (data keywords aside).
bool has_ref(const ordered_json& s) {
  if (s.is_array()) {
    for (const auto& v : s) {
      if (has_ref(v)) return true;
    }
    return false;
  }
  if (!s.is_object()) return false;
  for (const auto& [key, v] : s.items()) {
    if (is_data_keyword(key)) continue;
    if (key == "$ref" && v.is_string()) return true;
    if (has_ref(v)) return true;
  }
  return false;
}

// Local $refs of a schema moved to `base` (a JSON pointer fragment, "#/$defs/x"): "#" → base,
// "#/a/b" → base + "/a/b".
void rebase_refs(ordered_json& s, const std::string& base) {
  if (s.is_array()) {
    for (auto& v : s) rebase_refs(v, base);
    return;
  }
  if (!s.is_object()) return;
  for (auto& [key, v] : s.items()) {
    if (is_data_keyword(key)) continue;
    if (key == "$ref" && v.is_string()) {
      const std::string ref = v.get<std::string>();
      if (ref == "#" || ref.rfind("#/", 0) == 0) v = base + ref.substr(1);
      continue;
    }
    rebase_refs(v, base);
  }
}

ordered_json parameters_schema(const ToolFunction& f) {
  ordered_json p = f.parameters;
  if (f.strict) close_schema(p);
  return p;
}

ordered_json string_const(const std::string& value) {
  return ordered_json{{"type", "string"}, {"const", value}};
}

}  // namespace

GrammarSpec parameters_grammar(const ToolFunction& f) {
  GrammarSpec g;
  g.kind = PLINTH_GRAMMAR_JSON_SCHEMA;
  g.spec = parameters_schema(f).dump();
  return g;
}

namespace {

// The JSON Schema of the list of calls (each {"name": <const>, "arguments": <parameters>}, with
// Mistral Nemo's "id": 9 letters and digits after them): at least one, at most one without
// parallel_tool_calls or with a named function. Parameter schemas holding local $refs move into
// `defs` (the root's $defs), their references following them.
ordered_json calls_schema(const ToolRequest& r, bool with_id, ordered_json& defs) {
  ordered_json calls = ordered_json::array();
  for (size_t i = 0; i < r.tools.size(); ++i) {
    const ToolFunction& f = r.tools[i];
    if (r.choice == ToolChoice::kNamed && f.name != r.named) continue;
    ordered_json args = parameters_schema(f);
    if (has_ref(args)) {
      // Its local references resolve against the envelope's root: the schema moves into the
      // envelope's $defs and its references follow it.
      const std::string key = "plinth_tool_" + std::to_string(i);
      rebase_refs(args, "#/$defs/" + key);
      defs[key] = std::move(args);
      args = ordered_json{{"$ref", "#/$defs/" + key}};
    }
    ordered_json call = {
        {"type", "object"},
        {"properties", {{"name", string_const(f.name)}, {"arguments", std::move(args)}}},
        {"required", {"name", "arguments"}},
        {"additionalProperties", false}};
    if (with_id) {
      call["properties"]["id"] = {{"type", "string"}, {"pattern", "^[a-zA-Z0-9]{9}$"}};
      call["required"].push_back("id");
    }
    calls.push_back(std::move(call));
  }
  ordered_json list = {{"type", "array"},
                       {"items", calls.size() == 1 ? calls[0] : ordered_json{{"anyOf", calls}}},
                       {"minItems", 1}};
  if (!r.parallel || r.choice == ToolChoice::kNamed) list["maxItems"] = 1;
  return list;
}

}  // namespace

GrammarSpec mistral_nemo_grammar(const ToolRequest& r) {
  ordered_json defs = ordered_json::object();
  ordered_json list = calls_schema(r, true, defs);
  if (!defs.empty()) list["$defs"] = std::move(defs);
  GrammarSpec g;
  g.kind = PLINTH_GRAMMAR_JSON_SCHEMA;
  g.spec = list.dump();
  return g;
}

GrammarSpec envelope_grammar(const ToolRequest& r) {
  ordered_json defs = ordered_json::object();
  ordered_json list = calls_schema(r, false, defs);
  ordered_json envelope = {{"type", "object"},
                           {"properties", {{"tool_calls", std::move(list)}}},
                           {"required", ordered_json::array({"tool_calls"})},
                           {"additionalProperties", false}};
  if (r.choice == ToolChoice::kAuto) {
    ordered_json content = {{"type", "string"}};
    if (!r.response_schema.is_null()) {  // response_format: the reply follows its schema
      content = r.response_schema;
      if (has_ref(content)) {
        rebase_refs(content, "#/$defs/plinth_response");
        defs["plinth_response"] = std::move(content);
        content = ordered_json{{"$ref", "#/$defs/plinth_response"}};
      }
    }
    ordered_json response = {{"type", "object"},
                             {"properties", {{"response", std::move(content)}}},
                             {"required", ordered_json::array({"response"})},
                             {"additionalProperties", false}};
    envelope = ordered_json{{"anyOf", {std::move(envelope), std::move(response)}}};
  }
  if (!defs.empty()) envelope["$defs"] = std::move(defs);
  GrammarSpec g;
  g.kind = PLINTH_GRAMMAR_JSON_SCHEMA;
  g.spec = envelope.dump();
  return g;
}

namespace {

// The structural tag of calls each written as `begin_of(name)` + the function's arguments +
// `end`: auto: free text (or, with a response schema, a JSON reply following it) where
// `trigger` starts a call; required / named: calls only, one at least, `separator` between;
// without parallel_tool_calls (or named, or `one_call`) one call.
GrammarSpec call_tags_grammar(const ToolRequest& r, const std::string& trigger,
                              const std::function<std::string(const std::string&)>& begin_of,
                              const std::string& end, const std::string& separator, bool one_call) {
  ordered_json tags = ordered_json::array();
  for (const ToolFunction& f : r.tools) {
    if (r.choice == ToolChoice::kNamed && f.name != r.named) continue;
    tags.push_back({{"type", "tag"},
                    {"begin", begin_of(f.name)},
                    {"content", {{"type", "json_schema"}, {"json_schema", parameters_schema(f)}}},
                    {"end", end}});
  }
  const bool one = one_call || !r.parallel || r.choice == ToolChoice::kNamed;
  ordered_json calls = {{"type", "tags_with_separator"},
                        {"tags", tags},
                        {"separator", separator},
                        {"at_least_one", true},
                        {"stop_after_first", one}};
  ordered_json format;
  if (r.choice != ToolChoice::kAuto) {
    format = std::move(calls);
  } else if (!r.response_schema.is_null()) {
    // response_format beside tools: a JSON reply following its schema, or the calls.
    format = {{"type", "or"},
              {"elements", ordered_json::array({ordered_json{{"type", "json_schema"},
                                                             {"json_schema", r.response_schema}},
                                                std::move(calls)})}};
  } else {
    format = {{"type", "triggered_tags"},
              {"triggers", ordered_json::array({trigger})},
              {"tags", std::move(tags)},
              {"at_least_one", false},
              {"stop_after_first", one}};
  }
  GrammarSpec g;
  g.kind = PLINTH_GRAMMAR_STRUCTURAL_TAG;
  g.spec = ordered_json{{"type", "structural_tag"}, {"format", std::move(format)}}.dump();
  return g;
}

}  // namespace

GrammarSpec hermes_grammar(const ToolRequest& r) {
  return call_tags_grammar(
      r, "<tool_call>",
      [](const std::string& name) {
        return "<tool_call>\n{\"name\": " + ordered_json(name).dump() + ", \"arguments\": ";
      },
      "}\n</tool_call>", "\n", false);
}

GrammarSpec llama3_grammar(const ToolRequest& r) {
  return call_tags_grammar(
      r, "{\"name\": \"",
      [](const std::string& name) {
        return "{\"name\": " + ordered_json(name).dump() + ", \"parameters\": ";
      },
      "}", "", true);
}

GrammarSpec tool_call_grammar(const ToolRequest& r) {
  switch (r.format) {
    case ToolFormat::kHermes:
      return hermes_grammar(r);
    case ToolFormat::kLlama3Json:
      return llama3_grammar(r);
    case ToolFormat::kMistralNemo:
      return mistral_nemo_grammar(r);
    case ToolFormat::kEnvelope:
      break;
  }
  return envelope_grammar(r);
}

ordered_json response_schema_of(const GrammarSpec& g) {
  if (g.kind == PLINTH_GRAMMAR_JSON_OBJECT) return ordered_json{{"type", "object"}};
  ordered_json s = ordered_json::parse(g.spec, nullptr, false);
  if (s.is_discarded()) return ordered_json{{"type", "object"}};
  if (g.strict) close_schema(s);
  return s;
}

std::string envelope_system_prompt(const ToolRequest& r) {
  ordered_json list = ordered_json::array();
  for (const ToolFunction& f : r.tools) {
    if (r.choice == ToolChoice::kNamed && f.name != r.named) continue;
    ordered_json fn = {{"name", f.name}};
    if (!f.description.empty()) fn["description"] = f.description;
    fn["parameters"] = f.parameters;
    list.push_back(std::move(fn));
  }
  std::string text = "You can call the following tools:\n" + list.dump(2) + "\n\n";
  switch (r.choice) {
    case ToolChoice::kAuto:
      text +=
          "Respond in JSON, either with `tool_calls` (a request to call tools: "
          "{\"tool_calls\": [{\"name\": \"<tool name>\", \"arguments\": {...}}]}) or with "
          "`response` (a reply to the user: {\"response\": \"<your reply>\"}).";
      if (!r.response_schema.is_null()) {
        text += " The response is a JSON value following this JSON Schema:\n" +
                r.response_schema.dump(2);
      }
      break;
    case ToolChoice::kNamed:
      text += "Respond in JSON with a call of `" + r.named + "`: {\"tool_calls\": [{\"name\": \"" +
              r.named + "\", \"arguments\": {...}}]}.";
      break;
    default:
      text +=
          "Respond in JSON with `tool_calls` (a request to call tools): {\"tool_calls\": "
          "[{\"name\": \"<tool name>\", \"arguments\": {...}}]}.";
      break;
  }
  return text;
}

std::vector<ChatMessage> envelope_messages(std::vector<ChatMessage> messages,
                                           const ToolRequest* r) {
  std::map<std::string, std::string> call_names;  // call id → function name
  std::vector<ChatMessage> out;
  out.reserve(messages.size() + 1);
  for (ChatMessage& m : messages) {
    if (m.role == "assistant" && !m.tool_calls.empty()) {
      ordered_json calls = ordered_json::array();
      for (const ChatToolCall& c : m.tool_calls) {
        call_names[c.id] = c.name;
        calls.push_back(
            {{"name", c.name}, {"arguments", ordered_json::parse(c.arguments, nullptr, false)}});
      }
      std::string text = ordered_json{{"tool_calls", std::move(calls)}}.dump();
      if (!m.content.empty()) text = m.content + "\n" + text;
      out.push_back(ChatMessage{"assistant", std::move(text), m.reasoning_content});
      continue;
    }
    if (m.role == "tool") {
      ordered_json result = {{"tool_response", ordered_json::object()}};
      if (auto it = call_names.find(m.tool_call_id); it != call_names.end()) {
        result["tool_response"]["name"] = it->second;
      }
      result["tool_response"]["tool_call_id"] = m.tool_call_id;
      result["tool_response"]["content"] = m.content;
      std::string text = result.dump();
      if (!out.empty() && out.back().role == "user" && out.back().tool_call_id == "tool") {
        out.back().content += "\n" + text;  // the results of one turn's calls, together
      } else {
        out.push_back(ChatMessage{"user", std::move(text)});
        out.back().tool_call_id = "tool";  // marks a turn of results (not rendered)
      }
      continue;
    }
    out.push_back(std::move(m));
  }
  for (ChatMessage& m : out) m.tool_call_id.clear();
  if (r != nullptr && r->calls_possible()) {
    const std::string prompt = envelope_system_prompt(*r);
    if (!out.empty() && out.front().role == "system") {
      out.front().content += "\n\n" + prompt;
    } else {
      out.insert(out.begin(), ChatMessage{"system", prompt});
    }
  }
  return out;
}

}  // namespace plinth::server
