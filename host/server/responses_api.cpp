#include "server/responses_api.hpp"

#include <algorithm>
#include <array>
#include <chrono>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "app/engine_host.hpp"
#include "server/api_error.hpp"
#include "server/api_json.hpp"
#include "server/async_engine.hpp"
#include "server/client_order.hpp"

namespace plinth::server::responses {

namespace {

using nlohmann::json;

ApiError bad(const std::string& field, const std::string& message) {
  return ApiError::invalid(field, message);
}

// The text of one content part of an input message, `at` naming it.
std::string part_text(const json& part, const std::string& at) {
  if (!part.is_object()) throw bad(at, at + ": expected an object {\"type\": \"input_text\", ...}");
  const json* type = find_field(part, "type");
  if (type == nullptr || !type->is_string()) throw bad(at + ".type", at + ".type: required string");
  const auto& t = type->get_ref<const std::string&>();
  if (t == "input_text" || t == "output_text") {
    const json* text = find_field(part, "text");
    if (text == nullptr || !text->is_string())
      throw bad(at + ".text", at + ".text: required string");
    return text->get<std::string>();
  }
  if (t == "input_image" || t == "input_file" || t == "input_audio") {
    throw bad(at + ".type", at + ".type = \"" + t +
                                "\": images, files and audio are not supported by this server (a "
                                "text-only model); send input_text parts");
  }
  throw bad(at + ".type", at + ".type = \"" + t +
                              "\": unknown content part type; this server supports \"input_text\" "
                              "and \"output_text\"");
}

std::string string_member(const json& item, const char* key, const std::string& at) {
  const json* v = find_field(item, key);
  if (v == nullptr || !v->is_string()) {
    throw bad(at + "." + key, at + "." + key + ": required string");
  }
  return v->get<std::string>();
}

// A function_call input item (a call the model made, in the history) joins the assistant
// message before it, or starts one; a function_call_output item is a tool message.
void input_tool_item(const json& item, const std::string& type, const std::string& at,
                     json& messages) {
  if (type == "function_call") {
    json call = {{"id", string_member(item, "call_id", at)},
                 {"type", "function"},
                 {"function",
                  {{"name", string_member(item, "name", at)},
                   {"arguments", string_member(item, "arguments", at)}}}};
    if (messages.empty() || messages.back()["role"] != "assistant") {
      messages.push_back({{"role", "assistant"}, {"content", ""}});
    }
    json& last = messages.back();
    if (!last.contains("tool_calls")) last["tool_calls"] = json::array();
    last["tool_calls"].push_back(std::move(call));
    return;
  }
  const json* output = find_field(item, "output");
  if (output == nullptr || !output->is_string()) {
    throw bad(at + ".output", at + ".output: required string (the call's result)");
  }
  messages.push_back({{"role", "tool"},
                      {"tool_call_id", string_member(item, "call_id", at)},
                      {"content", *output}});
}

// One input item: a message {"type": "message"?, "role", "content": string | parts}.
json input_message(const json& item, const std::string& at) {
  if (!item.is_object()) throw bad(at, at + ": expected a message object {\"role\", \"content\"}");
  const std::string type = item.value("type", "message");
  if (type != "message") {
    throw bad(at + ".type", at + ".type = \"" + type +
                                "\": only message, function_call and function_call_output items "
                                "are supported (reasoning and item references are not)");
  }
  const json* role = find_field(item, "role");
  static constexpr std::array<const char*, 4> kRoles = {"user", "assistant", "system", "developer"};
  if (role == nullptr || !role->is_string() ||
      std::none_of(kRoles.begin(), kRoles.end(), [&](const char* r) { return *role == r; })) {
    throw bad(at + ".role",
              at + ".role: must be \"user\", \"assistant\", \"system\" or \"developer\"");
  }
  const json* content = find_field(item, "content");
  if (content == nullptr) throw bad(at + ".content", at + ".content: required");
  std::string text;
  if (content->is_string()) {
    text = content->get<std::string>();
  } else if (content->is_array()) {
    for (size_t j = 0; j < content->size(); ++j) {
      text += part_text((*content)[j], at + ".content[" + std::to_string(j) + "]");
    }
  } else {
    throw bad(at + ".content", at + ".content: expected a string or an array of content parts");
  }
  // The chat templates know a developer message as a system message.
  return {{"role", *role == "developer" ? "system" : role->get<std::string>()}, {"content", text}};
}

json input_messages(const json& body) {
  json messages = json::array();
  if (const json* instructions = find_field(body, "instructions"); instructions != nullptr) {
    if (!instructions->is_string()) throw bad("instructions", "instructions: expected a string");
    messages.push_back({{"role", "system"}, {"content", *instructions}});
  }
  const json* input = find_field(body, "input");
  if (input == nullptr) throw bad("input", "input: required (a string or an array of messages)");
  if (input->is_string()) {
    messages.push_back({{"role", "user"}, {"content", *input}});
  } else if (input->is_array()) {
    if (input->empty()) throw bad("input", "input: must not be empty");
    for (size_t i = 0; i < input->size(); ++i) {
      const json& item = (*input)[i];
      const std::string at = "input[" + std::to_string(i) + "]";
      const std::string type = item.is_object() && item.contains("type") && item["type"].is_string()
                                   ? item["type"].get<std::string>()
                                   : std::string("message");
      if (type == "function_call" || type == "function_call_output") {
        input_tool_item(item, type, at, messages);
      } else {
        messages.push_back(input_message(item, at));
      }
    }
  } else {
    throw bad("input", "input: expected a string or an array of messages, got " +
                           std::string(input->type_name()));
  }
  return messages;
}

// What a stateless server without a grammar plugin cannot do: refused unless it asks for nothing.
void refuse_state(const json& body) {
  if (const json* store = find_field(body, "store"); store != nullptr && *store != false) {
    throw bad("store",
              "store: this server keeps no responses (the stateless subset of the Responses API); "
              "send store: false or leave it out");
  }
  for (const char* key : {"previous_response_id", "conversation", "prompt"}) {
    if (find_field(body, key) != nullptr) {
      throw bad(key, std::string(key) +
                         ": this server keeps no responses, conversations or prompts (the "
                         "stateless subset of the Responses API); send the whole conversation in "
                         "`input`");
    }
  }
  if (const json* bg = find_field(body, "background"); bg != nullptr && *bg != false) {
    throw bad("background", "background: background responses are not supported");
  }
  for (const char* key : {"background_options", "context_management", "image"}) {
    if (find_field(body, key) != nullptr) {
      throw bad(key, std::string(key) + ": not supported by this server; leave it out");
    }
  }
}

void refuse_features(const json& body) {
  if (const json* text = find_field(body, "text"); text != nullptr) {
    if (!text->is_object()) throw bad("text", "text: expected an object");
    if (const json* format = find_field(*text, "format");
        format != nullptr && !format->is_object()) {
      throw bad("text.format", "text.format: expected an object with a \"type\"");
    }
    if (const json* v = find_field(*text, "verbosity"); v != nullptr && *v != "medium") {
      throw bad("text.verbosity", "text.verbosity: not supported; leave it out");
    }
  }
  if (const json* reasoning = find_field(body, "reasoning");
      reasoning != nullptr &&
      !(reasoning->is_object() && find_field(*reasoning, "effort") == nullptr &&
        find_field(*reasoning, "summary") == nullptr)) {
    throw bad("reasoning", "reasoning: this model has no reasoning settings; leave it out");
  }
  if (const json* include = find_field(body, "include"); include != nullptr && !include->empty()) {
    throw bad("include", "include: no extra output data is available; leave it out");
  }
  if (const json* top = find_field(body, "top_logprobs"); top != nullptr && *top != 0) {
    throw bad("top_logprobs",
              "top_logprobs: not supported on /v1/responses (use /v1/chat/completions)");
  }
  if (const json* t = find_field(body, "truncation"); t != nullptr && *t != "disabled") {
    throw bad("truncation",
              "truncation: only \"disabled\" (an input over the context is an error)");
  }
}

void check_stream_options(const json& body) {
  const json* so = find_field(body, "stream_options");
  if (so == nullptr) return;
  if (!so->is_object()) throw bad("stream_options", "stream_options: expected an object");
  if (body.value("stream", false) != true) {
    throw bad("stream_options", "stream_options: only with stream: true");
  }
  for (const auto& [key, value] : so->items()) {
    if (key != "include_obfuscation") {
      throw bad("stream_options." + key,
                "stream_options." + key + ": unknown option (supported: include_obfuscation)");
    }
    if (!value.is_boolean()) {
      throw bad("stream_options.include_obfuscation",
                "stream_options.include_obfuscation: expected a boolean");
    }
  }
}

// Function tools {"type": "function", "name", "description", "parameters", "strict"} as chat's
// {"type": "function", "function": {...}}; tool_choice {"type": "function", "name"} as chat's
// named function; parallel_tool_calls as it is.
// tools[i] = {"type": "function", "name", ...} as chat's {"type": "function", "function": {...}}.
json function_tool(const json& t, size_t i) {
  const std::string at = "tools[" + std::to_string(i) + "]";
  if (!t.is_object()) throw bad(at, at + ": expected an object");
  if (t.value("type", json()) != "function") {
    throw bad(at + ".type", at + ".type = " + t.value("type", json()).dump() +
                                ": only function tools are supported (built-in tools are not)");
  }
  if (json_nesting(t) > kMaxToolNesting) {
    throw bad(at, at + ": nested deeper than " + std::to_string(kMaxToolNesting) + " levels");
  }
  json fn = json::object();
  for (const auto& [key, value] : t.items()) {
    if (key != "type") fn[key] = value;
  }
  return {{"type", "function"}, {"function", std::move(fn)}};
}

void translate_tools(const json& body, json& chat) {
  if (const json* tools = find_field(body, "tools"); tools != nullptr) {
    if (!tools->is_array()) throw bad("tools", "tools: expected an array");
    json list = json::array();
    for (size_t i = 0; i < tools->size(); ++i) list.push_back(function_tool((*tools)[i], i));
    if (!list.empty()) chat["tools"] = std::move(list);
  }
  if (const json* choice = find_field(body, "tool_choice"); choice != nullptr) {
    if (choice->is_object() && choice->value("type", json()) == "function") {
      chat["tool_choice"] = {{"type", "function"},
                             {"function", {{"name", choice->value("name", json())}}}};
    } else if (chat.contains("tools") || *choice != "auto") {  // auto without tools: nothing
      chat["tool_choice"] = *choice;
    }
  }
  if (const json* p = find_field(body, "parallel_tool_calls"); p != nullptr) {
    chat["parallel_tool_calls"] = *p;
  }
}

// parse_request names the chat fields; say the Responses ones instead.
ApiError renamed(const ApiError& e) {
  std::string param = e.param(), message = e.what();
  // The chat messages do not map one to one on input items (instructions, function calls
  // joining a message): a message's field is named as the input's.
  if (param == "messages" || param.rfind("messages[", 0) == 0) param = "input";
  for (const char* from : {".function.", "tool_choice.function."}) {
    for (size_t at = param.find(from); at != std::string::npos; at = param.find(from)) {
      param.replace(at, std::string_view(from).size(),
                    std::string_view(from) == ".function." ? "." : "tool_choice.");
    }
  }
  if (param.rfind("response_format", 0) == 0) param = "text.format" + param.substr(15);
  if (param == "max_tokens") {
    param = "max_output_tokens";
    for (size_t at = message.find("max_tokens"); at != std::string::npos;
         at = message.find("max_tokens", at + 17)) {
      message.replace(at, 10, "max_output_tokens");
    }
  }
  return {e.status(), e.type(), message, param, e.code()};
}

int64_t unix_now() {
  using namespace std::chrono;
  return duration_cast<seconds>(system_clock::now().time_since_epoch()).count();
}

// text.format as chat's response_format (the grammar plugin enforces it; without one the chat
// parser's 400 names the field): {"type": "json_schema", "name", "schema", "strict"} becomes
// {"type": "json_schema", "json_schema": {...}}; "json_object" and "text" carry over as they are.
std::optional<json> response_format_of(const json& body) {
  const json* text = find_field(body, "text");
  const json* format = text != nullptr ? find_field(*text, "format") : nullptr;
  if (format == nullptr) return std::nullopt;
  const std::string type = format->value("type", "");
  if (type == "text" || type == "json_object") return json{{"type", type}};
  if (type != "json_schema") {
    throw bad("text.format.type",
              "text.format.type: expected \"text\", \"json_object\" or \"json_schema\"");
  }
  // Before the chat body holding it is written out (dump_json recurses).
  if (json_nesting(*format) > kMaxToolNesting) {
    throw bad("text.format.schema", "text.format.schema: nested deeper than " +
                                        std::to_string(kMaxToolNesting) + " levels");
  }
  json schema = json::object();
  for (const auto& [key, value] : format->items()) {
    if (key != "type") schema[key] = value;
  }
  return json{{"type", "json_schema"}, {"json_schema", std::move(schema)}};
}

}  // namespace

json translate(const json& body) {
  refuse_state(body);
  refuse_features(body);
  check_stream_options(body);
  json chat = {{"messages", input_messages(body)}};
  if (const json* max = find_field(body, "max_output_tokens"); max != nullptr) {
    chat["max_tokens"] = *max;
  }
  static constexpr std::array<const char*, 8> kSame = {
      "model", "temperature", "top_p", "stream", "user", "cache_salt", "speculative", "seed"};
  for (const char* key : kSame) {
    if (const json* v = find_field(body, key); v != nullptr) chat[key] = *v;
  }
  if (const json* meta = find_field(body, "metadata"); meta != nullptr && !meta->is_object()) {
    throw bad("metadata", "metadata: expected an object of strings");
  }
  if (std::optional<json> rf = response_format_of(body)) chat["response_format"] = std::move(*rf);
  translate_tools(body, chat);
  return chat;
}

namespace {

// The schemas translate() copied into the chat body, with their places in both.
std::vector<CopiedValue> copied_schemas(const json& body) {
  std::vector<CopiedValue> out = {{"/text/format/schema", "/response_format/json_schema/schema"}};
  if (const json* tools = find_field(body, "tools"); tools != nullptr && tools->is_array()) {
    for (size_t i = 0; i < tools->size(); ++i) {
      const std::string at = "/tools/" + std::to_string(i);
      out.push_back({at + "/parameters", at + "/function/parameters"});
    }
  }
  return out;
}

}  // namespace

PreparedGeneration prepare(std::string_view text, const EngineHost& host, const ParseLimits& limits,
                           std::string id) {
  const json body = parse_json_object(text);
  const json chat = translate(body);
  PreparedGeneration p;
  try {
    // The schemas in the client's member order (client_order.hpp).
    p.api = parse_request(
        ApiKind::kChat, chat_text_in_client_order(chat, text, copied_schemas(body)), host, limits);
  } catch (const ApiError& e) {
    throw renamed(e);
  }
  if (p.api.grammar && !p.api.tools) p.api.grammar_param = "text.format";
  p.response = std::make_unique<ResponsesResponse>(
      std::move(id), p.api.model, p.api.stream, static_cast<uint32_t>(p.api.prompts.front().size()),
      body, p.api.tools);
  p.max_tokens_field = "max_output_tokens";
  return p;
}

ResponsesResponse::ResponsesResponse(std::string id, std::string model, bool stream,
                                     uint32_t input_tokens, const json& request,
                                     std::shared_ptr<const ToolRequest> tools)
    : id_(std::move(id)),
      item_id_("msg_" + id_.substr(id_.find('_') + 1)),
      model_(std::move(model)),
      stream_(stream),
      created_at_(unix_now()),
      input_tokens_(input_tokens),
      tools_(std::move(tools)) {
  auto get = [&](const char* key, const json& fallback) {
    const json* v = find_field(request, key);
    return v != nullptr ? *v : fallback;
  };
  echo_ = {{"instructions", get("instructions", nullptr)},
           {"max_output_tokens", get("max_output_tokens", nullptr)},
           {"temperature", get("temperature", 1.0)},
           {"top_p", get("top_p", 1.0)},
           {"metadata", get("metadata", json::object())},
           {"user", get("user", nullptr)}};
  for (const char* key : {"tools", "tool_choice", "parallel_tool_calls"}) {
    if (const json* v = find_field(request, key); v != nullptr) echo_[key] = *v;
  }
  if (tools_) {
    tool_parser_ = make_tool_call_parser(*tools_);
  }
}

json ResponsesResponse::item_json(const Item& item, bool final) const {
  const char* status = !final ? "in_progress" : incomplete() ? "incomplete" : "completed";
  if (!item.call) {
    json content = json::array();
    if (final) {
      content.push_back({{"type", "output_text"},
                         {"text", tool_texts_[item.index]},
                         {"annotations", json::array()},
                         {"logprobs", json::array()}});
    }
    return {{"id", item.id},
            {"type", "message"},
            {"status", status},
            {"role", "assistant"},
            {"content", std::move(content)}};
  }
  const ToolCallResult::Call& call = tool_result_.calls.at(item.index);
  return {{"id", item.id},     {"type", "function_call"},
          {"status", status},  {"call_id", item.call_id},
          {"name", call.name}, {"arguments", final ? call.arguments : std::string()}};
}

std::string ResponsesResponse::close_item() const {
  if (!stream_ || !item_open_ || items_.empty()) return {};
  const Item& item = items_.back();
  const size_t output_index = items_.size() - 1;
  std::string out;
  if (item.call) {
    out += event("response.function_call_arguments.done",
                 {{"item_id", item.id},
                  {"output_index", output_index},
                  {"arguments", tool_result_.calls.at(item.index).arguments}});
  } else {
    const json where = {{"item_id", item.id}, {"output_index", output_index}, {"content_index", 0}};
    json text_done = where;
    text_done["text"] = tool_texts_[item.index];
    text_done["logprobs"] = json::array();
    out += event("response.output_text.done", std::move(text_done));
    json part_done = where;
    part_done["part"] = {{"type", "output_text"},
                         {"text", tool_texts_[item.index]},
                         {"annotations", json::array()},
                         {"logprobs", json::array()}};
    out += event("response.content_part.done", std::move(part_done));
  }
  out += event("response.output_item.done",
               {{"output_index", output_index}, {"item", item_json(item, true)}});
  return out;
}

std::string ResponsesResponse::tool_events(const std::vector<ToolEvent>& events) {
  std::string out;
  for (const ToolEvent& e : events) {
    tool_result_.apply(e);
    if (e.kind == ToolEvent::Kind::kContent) {
      if (!item_open_ || items_.back().call) {
        out += close_item();
        const std::string id =
            tool_texts_.empty() ? item_id_ : item_id_ + "_" + std::to_string(tool_texts_.size());
        items_.push_back({false, id, "", tool_texts_.size()});
        tool_texts_.emplace_back();
        item_open_ = true;
        if (stream_) {
          const size_t output_index = items_.size() - 1;
          out += event("response.output_item.added",
                       {{"output_index", output_index}, {"item", item_json(items_.back(), false)}});
          out += event("response.content_part.added", {{"item_id", id},
                                                       {"output_index", output_index},
                                                       {"content_index", 0},
                                                       {"part",
                                                        {{"type", "output_text"},
                                                         {"text", ""},
                                                         {"annotations", json::array()},
                                                         {"logprobs", json::array()}}}});
        }
      }
      tool_texts_[items_.back().index] += e.text;
      if (stream_) {
        out += event("response.output_text.delta", {{"item_id", items_.back().id},
                                                    {"output_index", items_.size() - 1},
                                                    {"content_index", 0},
                                                    {"delta", e.text},
                                                    {"logprobs", json::array()}});
      }
    } else if (e.kind == ToolEvent::Kind::kCallStart) {
      out += close_item();
      items_.push_back(
          {true, random_tool_id("fc_"), random_tool_id("call_"), static_cast<size_t>(e.index)});
      item_open_ = true;
      if (stream_) {
        out += event("response.output_item.added", {{"output_index", items_.size() - 1},
                                                    {"item", item_json(items_.back(), false)}});
      }
    } else if (stream_ && item_open_ && items_.back().call && items_.back().index == e.index) {
      out += event(
          "response.function_call_arguments.delta",
          {{"item_id", items_.back().id}, {"output_index", items_.size() - 1}, {"delta", e.text}});
    }
  }
  return out;
}

json ResponsesResponse::text_part() const {
  return {{"type", "output_text"},
          {"text", text_},
          {"annotations", json::array()},
          {"logprobs", json::array()}};
}

json ResponsesResponse::message_item(bool final) const {
  const char* status = !final ? "in_progress" : incomplete() ? "incomplete" : "completed";
  return {{"id", item_id_},
          {"type", "message"},
          {"status", status},
          {"role", "assistant"},
          {"content", final ? json::array({text_part()}) : json::array()}};
}

json ResponsesResponse::object(bool final) const {
  std::string status = "in_progress";
  json incomplete_details = nullptr, error = nullptr;
  if (final && !error_.empty()) {
    status = "failed";
    error = {{"code", "server_error"}, {"message", error_}};
  } else if (final && incomplete()) {
    status = "incomplete";
    incomplete_details = {{"reason", finish_reason_ == "length" ? "max_output_tokens" : "abort"}};
  } else if (final) {
    status = "completed";
  }
  json j = {{"id", id_},
            {"object", "response"},
            {"created_at", created_at_},
            {"status", status},
            {"background", false},
            {"error", error},
            {"incomplete_details", incomplete_details},
            {"model", model_},
            {"output", json::array()},
            {"parallel_tool_calls", true},
            {"previous_response_id", nullptr},
            {"reasoning", {{"effort", nullptr}, {"summary", nullptr}}},
            {"store", false},
            {"text", {{"format", {{"type", "text"}}}}},
            {"tool_choice", "auto"},
            {"tools", json::array()},
            {"truncation", "disabled"},
            {"usage", nullptr}};
  if (final && tool_parser_) {
    for (const Item& item : items_) j["output"].push_back(item_json(item, true));
  } else if (final) {
    j["output"].push_back(message_item(true));
  }
  j.update(echo_);
  if (final) {
    j["usage"] = {{"input_tokens", input_tokens_},
                  {"input_tokens_details", {{"cached_tokens", 0}}},
                  {"output_tokens", output_tokens_},
                  {"output_tokens_details", {{"reasoning_tokens", 0}}},
                  {"total_tokens", input_tokens_ + output_tokens_}};
  }
  return j;
}

std::string ResponsesResponse::event(const std::string& type, json data) const {
  data["type"] = type;
  data["sequence_number"] = sequence_number_++;
  return sse_event(type, data);
}

std::string ResponsesResponse::on_event(size_t, const StreamEvent& ev) {
  if (finished_) return {};
  text_ += ev.text_delta;
  output_tokens_ = std::max(output_tokens_, ev.num_generated_tokens);
  if (ev.finished) {
    finished_ = true;
    finish_reason_ = ev.finish_reason;
    if (ev.finish_reason == "error") {
      error_ = ev.error;
      error_status_ = ev.error_status;
      error_param_ = ev.error_param;
    }
  }
  if (tool_parser_) {
    std::vector<ToolEvent> events;
    feed_reply(*tool_parser_, ev.text_delta, ev.trigger_offset, ev.finished, events);
    std::string out;
    if (stream_ && !started_) {
      started_ = true;
      out += event("response.created", {{"response", object(false)}});
      out += event("response.in_progress", {{"response", object(false)}});
    }
    return out + tool_events(events);
  }
  if (!stream_) return {};
  std::string out;
  const json where = {{"item_id", item_id_}, {"output_index", 0}, {"content_index", 0}};
  if (!started_) {
    started_ = true;
    out += event("response.created", {{"response", object(false)}});
    out += event("response.in_progress", {{"response", object(false)}});
    out +=
        event("response.output_item.added", {{"output_index", 0}, {"item", message_item(false)}});
    json part = where;
    part["part"] = {{"type", "output_text"},
                    {"text", ""},
                    {"annotations", json::array()},
                    {"logprobs", json::array()}};
    out += event("response.content_part.added", std::move(part));
  }
  if (!ev.text_delta.empty()) {
    json delta = where;
    delta["delta"] = ev.text_delta;
    delta["logprobs"] = json::array();
    out += event("response.output_text.delta", std::move(delta));
  }
  return out;
}

std::string ResponsesResponse::stream_end() const {
  if (!error_.empty()) return event("response.failed", {{"response", object(true)}});
  if (tool_parser_) {
    const char* last = incomplete() ? "response.incomplete" : "response.completed";
    return close_item() + event(last, {{"response", object(true)}});
  }
  json done = {{"item_id", item_id_}, {"output_index", 0}, {"content_index", 0}};
  json text_done = done;
  text_done["text"] = text_;
  text_done["logprobs"] = json::array();
  std::string out = event("response.output_text.done", std::move(text_done));
  done["part"] = text_part();
  out += event("response.content_part.done", std::move(done));
  out += event("response.output_item.done", {{"output_index", 0}, {"item", message_item(true)}});
  const char* last = incomplete() ? "response.incomplete" : "response.completed";
  out += event(last, {{"response", object(true)}});
  return out;
}

std::string ResponsesResponse::body() const {
  return dump_json(object(true));
}

}  // namespace plinth::server::responses
