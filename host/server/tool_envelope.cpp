#include "server/tool_envelope.hpp"

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

GrammarSpec envelope_grammar(const ToolRequest& r) {
  ordered_json defs = ordered_json::object();
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
    calls.push_back(ordered_json{
        {"type", "object"},
        {"properties", {{"name", string_const(f.name)}, {"arguments", std::move(args)}}},
        {"required", {"name", "arguments"}},
        {"additionalProperties", false}});
  }
  ordered_json list = {{"type", "array"},
                       {"items", calls.size() == 1 ? calls[0] : ordered_json{{"anyOf", calls}}},
                       {"minItems", 1}};
  if (!r.parallel || r.choice == ToolChoice::kNamed) list["maxItems"] = 1;
  ordered_json envelope = {{"type", "object"},
                           {"properties", {{"tool_calls", std::move(list)}}},
                           {"required", ordered_json::array({"tool_calls"})},
                           {"additionalProperties", false}};
  if (r.choice == ToolChoice::kAuto) {
    ordered_json response = {{"type", "object"},
                             {"properties", {{"response", {{"type", "string"}}}}},
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

GrammarSpec hermes_grammar(const ToolRequest& r) {
  ordered_json tags = ordered_json::array();
  for (const ToolFunction& f : r.tools) {
    if (r.choice == ToolChoice::kNamed && f.name != r.named) continue;
    tags.push_back(
        {{"type", "tag"},
         {"begin", "<tool_call>\n{\"name\": " + ordered_json(f.name).dump() + ", \"arguments\": "},
         {"content", {{"type", "json_schema"}, {"json_schema", parameters_schema(f)}}},
         {"end", "}\n</tool_call>"}});
  }
  const bool one = !r.parallel || r.choice == ToolChoice::kNamed;
  // auto: free text, a call wherever the marker starts one; required / named: calls only.
  const ordered_json format = r.choice == ToolChoice::kAuto
                                  ? ordered_json{{"type", "triggered_tags"},
                                                 {"triggers", ordered_json::array({"<tool_call>"})},
                                                 {"tags", std::move(tags)},
                                                 {"at_least_one", false},
                                                 {"stop_after_first", one}}
                                  : ordered_json{{"type", "tags_with_separator"},
                                                 {"tags", std::move(tags)},
                                                 {"separator", "\n"},
                                                 {"at_least_one", true},
                                                 {"stop_after_first", one}};
  GrammarSpec g;
  g.kind = PLINTH_GRAMMAR_STRUCTURAL_TAG;
  g.spec = ordered_json{{"type", "structural_tag"}, {"format", format}}.dump();
  return g;
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
