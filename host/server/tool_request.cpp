#include "server/tool_request.hpp"

#include <algorithm>
#include <set>
#include <utility>
#include <vector>

#include "chat/ordered_json.hpp"
#include "server/api_error.hpp"

namespace plinth::server {

namespace {

using nlohmann::json;
using nlohmann::ordered_json;

bool valid_name(const std::string& name) {
  if (name.empty() || name.size() > 64) return false;
  for (char c : name) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                    c == '_' || c == '-';
    if (!ok) return false;
  }
  return true;
}

// The parameters schema of tools[i]: an object schema (OpenAI: "type": "object" at the top).
ordered_json parameters_of(const ordered_json* given, const std::string& at) {
  if (given == nullptr || given->is_null()) {
    return ordered_json{{"type", "object"}, {"properties", ordered_json::object()}};
  }
  if (!given->is_object()) {
    throw ApiError::unprocessable(
        at, at + ": expected a JSON Schema object, got " + std::string(given->type_name()));
  }
  const auto type = given->find("type");
  if (type == given->end()) {
    if (given->empty()) return ordered_json{{"type", "object"}};
    throw ApiError::invalid(at + ".type", at + ".type: required, \"object\" (a function's "
                                               "arguments are a JSON object)");
  }
  if (*type != "object") {
    throw ApiError::invalid(at + ".type", at + ".type = " + type->dump() +
                                              ": must be \"object\" (a function's arguments "
                                              "are a JSON object)");
  }
  return *given;
}

template <class Json>
size_t nesting_of(const Json& v) {
  std::vector<std::pair<const Json*, size_t>> todo = {{&v, 1}};
  size_t deepest = 0;
  while (!todo.empty()) {
    const auto [node, depth] = todo.back();
    todo.pop_back();
    deepest = std::max(deepest, depth);
    if (depth > kMaxToolNesting + 1) break;
    if (node->is_structured()) {
      for (const auto& child : *node) todo.emplace_back(&child, depth + 1);
    }
  }
  return deepest;
}

ToolFunction parse_tool(const ordered_json& tool, size_t i) {
  const std::string at = "tools[" + std::to_string(i) + "]";
  if (json_nesting(tool) > kMaxToolNesting) {
    throw ApiError::invalid(
        at, at + ": nested deeper than " + std::to_string(kMaxToolNesting) + " levels");
  }
  if (!tool.is_object()) {
    throw ApiError::unprocessable(at, at + ": expected an object {\"type\": \"function\", "
                                           "\"function\": {...}}");
  }
  const auto type = tool.find("type");
  if (type == tool.end() || !type->is_string()) {
    throw ApiError::unprocessable(at + ".type", at + ".type: required string \"function\"");
  }
  if (*type != "function") {
    throw ApiError::invalid(
        at + ".type", at + ".type = " + type->dump() + ": only \"function\" tools are supported");
  }
  const auto fn = tool.find("function");
  if (fn == tool.end() || !fn->is_object()) {
    throw ApiError::unprocessable(at + ".function",
                                  at + ".function: required object {\"name\", \"description\", "
                                       "\"parameters\", \"strict\"}");
  }
  ToolFunction f;
  f.source = tool;
  const auto name = fn->find("name");
  if (name == fn->end() || !name->is_string()) {
    throw ApiError::unprocessable(at + ".function.name", at + ".function.name: required string");
  }
  f.name = name->get<std::string>();
  if (!valid_name(f.name)) {
    throw ApiError::invalid(at + ".function.name",
                            at + ".function.name = " + name->dump() +
                                ": must be 1 to 64 of a-z, A-Z, 0-9, '_' and '-'");
  }
  if (auto d = fn->find("description"); d != fn->end() && !d->is_null()) {
    if (!d->is_string()) {
      throw ApiError::unprocessable(at + ".function.description",
                                    at + ".function.description: expected a string");
    }
    f.description = d->get<std::string>();
  }
  if (auto s = fn->find("strict"); s != fn->end() && !s->is_null()) {
    if (!s->is_boolean()) {
      throw ApiError::unprocessable(at + ".function.strict",
                                    at + ".function.strict: expected a boolean");
    }
    f.strict = s->get<bool>();
  }
  const auto params = fn->find("parameters");
  f.parameters =
      parameters_of(params == fn->end() ? nullptr : &*params, at + ".function.parameters");
  return f;
}

void parse_tool_choice(const json& v, ToolRequest& r) {
  if (v.is_string()) {
    const std::string s = v.get<std::string>();
    if (s == "none") {
      r.choice = ToolChoice::kNone;
    } else if (s == "auto") {
      r.choice = ToolChoice::kAuto;
    } else if (s == "required") {
      r.choice = ToolChoice::kRequired;
    } else {
      throw ApiError::invalid("tool_choice", "tool_choice = " + v.dump() +
                                                 ": expected \"none\", \"auto\", \"required\" or "
                                                 "{\"type\": \"function\", \"function\": "
                                                 "{\"name\": ...}}");
    }
    return;
  }
  if (!v.is_object()) {
    throw ApiError::unprocessable(
        "tool_choice",
        "tool_choice: expected a string or an object, got " + std::string(v.type_name()));
  }
  const auto type = v.find("type");
  if (type == v.end() || *type != "function") {
    throw ApiError::invalid("tool_choice.type", "tool_choice.type: must be \"function\"");
  }
  const auto fn = v.find("function");
  const bool has_name =
      fn != v.end() && fn->is_object() && fn->contains("name") && (*fn)["name"].is_string();
  if (!has_name) {
    throw ApiError::unprocessable("tool_choice.function.name",
                                  "tool_choice.function.name: required string");
  }
  r.choice = ToolChoice::kNamed;
  r.named = (*fn)["name"].get<std::string>();
}

}  // namespace

size_t json_nesting(const json& v) {
  return nesting_of(v);
}
size_t json_nesting(const ordered_json& v) {
  return nesting_of(v);
}

const ToolFunction* ToolRequest::find(std::string_view name) const {
  for (const ToolFunction& f : tools) {
    if (f.name == name) return &f;
  }
  return nullptr;
}

namespace {

// tools: each read (the schemas from the body's text, members in order).
std::vector<ToolFunction> parse_tool_list(const json& tools, std::string_view raw) {
  if (!tools.is_array()) {
    throw ApiError::unprocessable(
        "tools", "tools: expected an array of tools, got " + std::string(tools.type_name()));
  }
  if (tools.size() > 128) throw ApiError::invalid("tools", "tools: at most 128 tools per request");
  if (json_nesting(tools) > kMaxToolNesting + 1) {  // before anything copies them
    throw ApiError::invalid(
        "tools", "tools: nested deeper than " + std::to_string(kMaxToolNesting) + " levels");
  }
  // The schemas with their members in the request's order (`body` has sorted them); the sorted
  // ones if the text says otherwise (a duplicate "tools" key: the parsers keep different ones).
  const auto ordered = parse_ordered_json(raw);  // linear time (ordered_json.hpp)
  const bool same = ordered.is_object() && ordered.contains("tools") &&
                    ordered["tools"].is_array() && ordered["tools"].size() == tools.size();
  ordered_json fallback;
  if (!same) fallback = ordered_json::parse(tools.dump());
  const ordered_json& list = same ? ordered["tools"] : fallback;
  std::vector<ToolFunction> out;
  std::set<std::string> names;
  for (size_t i = 0; i < list.size(); ++i) {
    ToolFunction f = parse_tool(list[i], i);
    if (!names.insert(f.name).second) {
      const std::string at = "tools[" + std::to_string(i) + "].function.name";
      throw ApiError::invalid(
          at, at + ": \"" + f.name + "\" is the name of an earlier tool; names must be unique");
    }
    out.push_back(std::move(f));
  }
  return out;
}

}  // namespace

std::optional<ToolRequest> parse_tool_request(const json& body, std::string_view raw) {
  const auto tools = body.find("tools");
  const auto choice = body.find("tool_choice");
  const bool has_tools = tools != body.end() && !tools->is_null();
  const bool has_choice = choice != body.end() && !choice->is_null();
  if (!has_tools && !has_choice) return std::nullopt;
  ToolRequest r;
  if (has_tools) r.tools = parse_tool_list(*tools, raw);
  r.choice = r.tools.empty() ? ToolChoice::kNone : ToolChoice::kAuto;
  if (has_choice) parse_tool_choice(*choice, r);
  if (r.tools.empty() && r.choice != ToolChoice::kNone) {
    throw ApiError::invalid("tool_choice",
                            "tool_choice: requires tools (the request lists no tool to call)");
  }
  if (r.choice == ToolChoice::kNamed && r.find(r.named) == nullptr) {
    throw ApiError::invalid(
        "tool_choice.function.name",
        "tool_choice.function.name = \"" + r.named + "\": no tool of that name in tools");
  }
  if (auto p = body.find("parallel_tool_calls"); p != body.end() && !p->is_null()) {
    if (!p->is_boolean()) {
      throw ApiError::unprocessable("parallel_tool_calls",
                                    "parallel_tool_calls: expected a boolean");
    }
    r.parallel = p->get<bool>();
  }
  return r;
}

namespace {

// messages[i].tool_calls[j] (`at`): {"id", "type": "function", "function": {"name", "arguments"}}.
ChatToolCall parse_history_call(const json& c, const std::string& at) {
  if (!c.is_object()) throw ApiError::unprocessable(at, at + ": expected an object");
  ChatToolCall call;
  if (auto id = c.find("id"); id != c.end() && !id->is_null()) {
    if (!id->is_string()) throw ApiError::unprocessable(at + ".id", at + ".id: expected a string");
    call.id = id->get<std::string>();
  }
  if (auto type = c.find("type"); type != c.end() && !type->is_null() && *type != "function") {
    throw ApiError::invalid(at + ".type", at + ".type: must be \"function\"");
  }
  const auto fn = c.find("function");
  if (fn == c.end() || !fn->is_object()) {
    throw ApiError::unprocessable(at + ".function",
                                  at + ".function: required object {\"name\", \"arguments\"}");
  }
  const auto name = fn->find("name");
  if (name == fn->end() || !name->is_string()) {
    throw ApiError::unprocessable(at + ".function.name", at + ".function.name: required string");
  }
  call.name = name->get<std::string>();
  const auto args = fn->find("arguments");
  if (args == fn->end() || !args->is_string()) {
    throw ApiError::unprocessable(at + ".function.arguments",
                                  at + ".function.arguments: required string (the arguments' "
                                       "JSON text)");
  }
  call.arguments = args->get<std::string>();
  const json parsed = json::parse(call.arguments, nullptr, false);
  if (parsed.is_discarded()) {
    throw ApiError::invalid(at + ".function.arguments", at + ".function.arguments: not JSON text");
  }
  if (json_nesting(parsed) > kMaxToolNesting) {
    throw ApiError::invalid(at + ".function.arguments",
                            at + ".function.arguments: nested deeper than " +
                                std::to_string(kMaxToolNesting) + " levels");
  }
  return call;
}

}  // namespace

void parse_message_tools(const json& m, const std::string& where, ChatMessage& msg) {
  if (msg.role == "tool") {
    const auto id = m.find("tool_call_id");
    if (id == m.end() || !id->is_string()) {
      throw ApiError::unprocessable(where + ".tool_call_id",
                                    where +
                                        ".tool_call_id: required string (the id of the call "
                                        "this message answers)");
    }
    msg.tool_call_id = id->get<std::string>();
    return;
  }
  const auto calls = m.find("tool_calls");
  if (calls == m.end() || calls->is_null()) return;
  const std::string at = where + ".tool_calls";
  if (msg.role != "assistant") {
    throw ApiError::invalid(at, at + ": only assistant messages carry tool calls");
  }
  if (!calls->is_array()) {
    throw ApiError::unprocessable(
        at, at + ": expected an array, got " + std::string(calls->type_name()));
  }
  for (size_t j = 0; j < calls->size(); ++j) {
    msg.tool_calls.push_back(parse_history_call((*calls)[j], at + "[" + std::to_string(j) + "]"));
  }
}

std::string mistral_call_id(const std::string& id) {
  static constexpr char kAlphabet[] =
      "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
  const bool nine =
      id.size() == 9 && std::all_of(id.begin(), id.end(), [](char c) {
        return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
      });
  if (nine) return id;
  uint64_t h = 14695981039346656037ULL;
  for (const char c : id) {
    h ^= static_cast<unsigned char>(c);
    h *= 1099511628211ULL;
  }
  std::string out;
  for (int i = 0; i < 9; ++i) {
    out += kAlphabet[h % 62];
    h /= 62;
  }
  return out;
}

void check_tool_history(const std::vector<ChatMessage>& messages) {
  std::set<std::string> ids;
  for (size_t i = 0; i < messages.size(); ++i) {
    const ChatMessage& m = messages[i];
    for (const ChatToolCall& c : m.tool_calls) ids.insert(c.id);
    if (m.role == "tool" && ids.count(m.tool_call_id) == 0) {
      const std::string at = "messages[" + std::to_string(i) + "].tool_call_id";
      throw ApiError::invalid(at, at + " = \"" + m.tool_call_id +
                                      "\": a tool message must answer a tool call of an earlier "
                                      "assistant message (no call has that id)");
    }
  }
}

}  // namespace plinth::server
