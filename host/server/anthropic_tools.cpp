#include "server/anthropic_tools.hpp"

#include <iterator>
#include <regex>

#include "server/api_json.hpp"
#include "server/tool_request.hpp"

namespace plinth::server::anthropic {

namespace {

using nlohmann::json;

ApiError bad(const std::string& field, const std::string& message) {
  return ApiError::invalid(field, message);
}

json translate_tool(const json& tool, size_t i) {
  const std::string at = "tools[" + std::to_string(i) + "]";
  if (!tool.is_object()) throw bad(at, at + ": expected an object {\"name\", \"input_schema\"}");
  if (const json* type = find_field(tool, "type"); type != nullptr && *type != "custom") {
    throw bad(at + ".type", at + ".type = " + type->dump() +
                                ": built-in tools are not supported by this server; give client "
                                "tools {\"name\", \"description\", \"input_schema\"}");
  }
  const json* name = find_field(tool, "name");
  if (name == nullptr || !name->is_string()) throw bad(at + ".name", at + ".name: required string");
  const json* schema = find_field(tool, "input_schema");
  if (schema == nullptr || !schema->is_object()) {
    throw bad(at + ".input_schema", at + ".input_schema: required, a JSON Schema object");
  }
  if (json_nesting(*schema) > kMaxToolNesting) {
    throw bad(at + ".input_schema", at + ".input_schema: nested deeper than " +
                                        std::to_string(kMaxToolNesting) + " levels");
  }
  json fn = {{"name", *name}, {"parameters", *schema}};
  if (const json* d = find_field(tool, "description"); d != nullptr) {
    if (!d->is_string()) throw bad(at + ".description", at + ".description: expected a string");
    fn["description"] = *d;
  }
  return {{"type", "function"}, {"function", std::move(fn)}};
}

void translate_tool_choice(const json& choice, json& chat) {
  if (!choice.is_object()) {
    throw bad("tool_choice",
              "tool_choice: expected an object {\"type\": \"auto\" | \"any\" | "
              "\"tool\" | \"none\"}");
  }
  const std::string type = choice.contains("type") && choice["type"].is_string()
                               ? choice["type"].get<std::string>()
                               : std::string();
  if (type == "auto" || type == "none") {
    chat["tool_choice"] = type;
  } else if (type == "any") {
    chat["tool_choice"] = "required";
  } else if (type == "tool") {
    const json* name = find_field(choice, "name");
    if (name == nullptr || !name->is_string()) {
      throw bad("tool_choice.name", "tool_choice.name: required string with type \"tool\"");
    }
    chat["tool_choice"] = {{"type", "function"}, {"function", {{"name", *name}}}};
  } else {
    throw bad("tool_choice.type",
              "tool_choice.type: expected \"auto\", \"any\", \"tool\" or \"none\"");
  }
  if (const json* d = find_field(choice, "disable_parallel_tool_use"); d != nullptr) {
    if (!d->is_boolean()) {
      throw bad("tool_choice.disable_parallel_tool_use",
                "tool_choice.disable_parallel_tool_use: expected a boolean");
    }
    chat["parallel_tool_calls"] = !d->get<bool>();
  }
}

// The text of a tool_result's content: a string, or text blocks.
std::string result_text(const json* content, const std::string& at) {
  if (content == nullptr) return {};
  if (content->is_string()) return content->get<std::string>();
  if (!content->is_array()) {
    throw bad(at, at + ": expected a string or an array of text blocks");
  }
  std::string text;
  for (size_t k = 0; k < content->size(); ++k) {
    const json& b = (*content)[k];
    const std::string bat = at + "[" + std::to_string(k) + "]";
    if (!b.is_object() || b.value("type", json()) != "text" || !b.contains("text") ||
        !b["text"].is_string()) {
      throw bad(bat, bat + ": only text blocks are supported in a tool result");
    }
    text += b["text"].get<std::string>();
  }
  return text;
}

ChatToolCall tool_use(const json& block, const std::string& at) {
  const json* id = find_field(block, "id");
  const json* name = find_field(block, "name");
  const json* input = find_field(block, "input");
  if (id == nullptr || !id->is_string()) throw bad(at + ".id", at + ".id: required string");
  if (name == nullptr || !name->is_string()) throw bad(at + ".name", at + ".name: required string");
  if (input == nullptr || !input->is_object()) {
    throw bad(at + ".input", at + ".input: required object (the call's arguments)");
  }
  if (json_nesting(*input) > kMaxToolNesting) {
    throw bad(at + ".input",
              at + ".input: nested deeper than " + std::to_string(kMaxToolNesting) + " levels");
  }
  return {id->get<std::string>(), name->get<std::string>(), input->dump()};
}

std::string block_type(const json& block, const std::string& at) {
  if (!block.is_object() || !block.contains("type") || !block["type"].is_string()) {
    throw bad(at + ".type", at + ".type: required string");
  }
  return block["type"].get<std::string>();
}

}  // namespace

void translate_tools(const json& body, json& chat) {
  if (const json* tools = find_field(body, "tools"); tools != nullptr) {
    if (!tools->is_array()) throw bad("tools", "tools: expected an array");
    json list = json::array();
    for (size_t i = 0; i < tools->size(); ++i) list.push_back(translate_tool((*tools)[i], i));
    if (!list.empty()) chat["tools"] = std::move(list);
  }
  if (const json* choice = find_field(body, "tool_choice"); choice != nullptr) {
    translate_tool_choice(*choice, chat);
    if (!chat.contains("tools") && chat["tool_choice"] == "auto") chat.erase("tool_choice");
  }
}

void translate_turn(const std::string& role, const json& content, const std::string& at,
                    const BlockText& block_text, std::vector<ChatMessage>& out) {
  if (!content.is_array()) {
    throw bad(at, at + ": expected a string or an array of content blocks, got " +
                      std::string(content.type_name()));
  }
  ChatMessage turn{role, ""};
  size_t results = 0;
  for (size_t j = 0; j < content.size(); ++j) {
    const json& block = content[j];
    const std::string bat = at + "[" + std::to_string(j) + "]";
    const std::string type = block_type(block, bat);
    if (type == "tool_use") {
      if (role != "assistant") {
        throw bad(bat + ".type", bat + ": tool_use blocks belong to assistant turns");
      }
      turn.tool_calls.push_back(tool_use(block, bat));
    } else if (type == "tool_result") {
      if (role != "user") {
        throw bad(bat + ".type", bat + ": tool_result blocks belong to user turns");
      }
      const json* id = find_field(block, "tool_use_id");
      if (id == nullptr || !id->is_string()) {
        throw bad(bat + ".tool_use_id", bat + ".tool_use_id: required string");
      }
      ChatMessage result{"tool", result_text(find_field(block, "content"), bat + ".content")};
      if (const json* err = find_field(block, "is_error"); err != nullptr && *err == true) {
        result.content = "Error: " + result.content;
      }
      result.tool_call_id = id->get<std::string>();
      out.push_back(std::move(result));
      ++results;
    } else {
      turn.content += block_text(block, bat);
    }
  }
  // A user turn of tool results only is those results; any other turn stays (an empty one too).
  const bool results_only = role == "user" && !out.empty() && out.back().role == "tool" &&
                            turn.content.empty() && results > 0;
  if (!results_only) out.push_back(std::move(turn));
}

json chat_message_json(const ChatMessage& m) {
  json j = {{"role", m.role}, {"content", m.content}};
  if (!m.tool_calls.empty()) {
    json calls = json::array();
    for (const ChatToolCall& c : m.tool_calls) {
      calls.push_back({{"id", c.id},
                       {"type", "function"},
                       {"function", {{"name", c.name}, {"arguments", c.arguments}}}});
    }
    j["tool_calls"] = std::move(calls);
  }
  if (m.role == "tool") j["tool_call_id"] = m.tool_call_id;
  return j;
}

bool uses_tools(const std::vector<ChatMessage>& conversation, const json& body) {
  if (find_field(body, "tools") != nullptr || find_field(body, "tool_choice") != nullptr) {
    return true;
  }
  for (const ChatMessage& m : conversation) {
    if (m.role == "tool" || !m.tool_calls.empty()) return true;
  }
  return false;
}

ApiError renamed(const ApiError& e) {
  static const std::regex kRules[] = {std::regex(R"(tools\[(\d+)\]\.function\.parameters)"),
                                      std::regex(R"(tools\[(\d+)\]\.function\.)"),
                                      std::regex(R"(tool_choice\.function\.name)"),
                                      std::regex(R"(parallel_tool_calls)")};
  static const char* const kTo[] = {"tools[$1].input_schema", "tools[$1].", "tool_choice.name",
                                    "tool_choice.disable_parallel_tool_use"};
  std::string param = e.param(), message = e.what();
  for (size_t i = 0; i < std::size(kRules); ++i) {
    param = std::regex_replace(param, kRules[i], kTo[i]);
    message = std::regex_replace(message, kRules[i], kTo[i]);
  }
  return {e.status(), e.type(), message, param, e.code()};
}

}  // namespace plinth::server::anthropic
