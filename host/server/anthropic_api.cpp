#include "server/anthropic_api.hpp"

#include <algorithm>
#include <array>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "app/engine_host.hpp"
#include "server/anthropic_tools.hpp"
#include "server/api_error.hpp"
#include "server/api_json.hpp"
#include "server/async_engine.hpp"
#include "server/client_order.hpp"

namespace plinth::server::anthropic {

namespace {

using nlohmann::json;

constexpr const char* kNoTools =
    "is not supported by this server yet: it needs constrained decoding (a grammar plugin), "
    "which plinth does not have yet; remove it from the request";

ApiError bad(const std::string& field, const std::string& message) {
  return ApiError::invalid(field, message);
}

// The text of one content block, `at` naming it ("messages[0].content[1]", "system[0]").
std::string block_text(const json& block, const std::string& at) {
  if (!block.is_object()) {
    throw bad(at,
              at + ": expected a content block object {\"type\": \"text\", \"text\": ...}, got " +
                  std::string(block.type_name()));
  }
  const json* type = find_field(block, "type");
  if (type == nullptr || !type->is_string()) {
    throw bad(at + ".type", at + ".type: required string (\"text\")");
  }
  const auto& t = type->get_ref<const std::string&>();
  if (t == "text") {
    const json* text = find_field(block, "text");
    if (text == nullptr || !text->is_string()) {
      throw bad(at + ".text", at + ".text: required string");
    }
    return text->get<std::string>();  // cache_control and citations change nothing here
  }
  if (t == "image" || t == "document") {
    throw bad(at + ".type", at + ".type = \"" + t + "\": " + t +
                                "s are not supported by this server (a text-only model); send "
                                "text blocks");
  }
  if (t == "server_tool_use") {
    throw bad(at + ".type", at + ".type = \"" + t + "\": server tools are not supported");
  }
  if (t == "thinking" || t == "redacted_thinking") {
    throw bad(at + ".type", at + ".type = \"" + t + "\": thinking blocks are not supported");
  }
  throw bad(at + ".type", at + ".type = \"" + t +
                              "\": unknown content block type; this server supports \"text\"");
}

// A string, or an array of text blocks, concatenated.
std::string content_text(const json& content, const std::string& at) {
  if (content.is_string()) return content.get<std::string>();
  if (!content.is_array()) {
    throw bad(at, at + ": expected a string or an array of content blocks, got " +
                      std::string(content.type_name()));
  }
  std::string text;
  for (size_t j = 0; j < content.size(); ++j) {
    text += block_text(content[j], at + "[" + std::to_string(j) + "]");
  }
  return text;
}

std::vector<ChatMessage> read_messages(const json& body) {
  const json* m = find_field(body, "messages");
  if (m == nullptr) throw bad("messages", "messages: required (an array of messages)");
  if (!m->is_array()) {
    throw bad("messages", "messages: expected an array, got " + std::string(m->type_name()));
  }
  if (m->empty()) throw bad("messages", "messages: must not be empty");
  std::vector<ChatMessage> out;
  for (size_t i = 0; i < m->size(); ++i) {
    const json& msg = (*m)[i];
    const std::string at = "messages[" + std::to_string(i) + "]";
    if (!msg.is_object()) throw bad(at, at + ": expected an object {\"role\", \"content\"}");
    const json* role = find_field(msg, "role");
    if (role == nullptr || !role->is_string() || (*role != "user" && *role != "assistant")) {
      throw bad(at + ".role",
                at + ".role: must be \"user\" or \"assistant\" (a system prompt goes in the "
                     "top-level `system` field)");
    }
    const json* content = find_field(msg, "content");
    if (content == nullptr) throw bad(at + ".content", at + ".content: required");
    if (content->is_string()) {
      out.push_back({role->get<std::string>(), content->get<std::string>()});
    } else {
      translate_turn(role->get<std::string>(), *content, at + ".content", block_text, out);
    }
  }
  if (out.back().role == "assistant") {
    throw bad("messages", "messages[" + std::to_string(out.size() - 1) +
                              "]: a final assistant message (a prefill the reply continues) is "
                              "not supported; end the conversation with a user message");
  }
  return out;
}

// output_config.format, container, mcp_servers, thinking: refused unless
// they ask for nothing. Hints without meaning for this server pass unread: output_config.effort,
// cache_control (the prefix cache is automatic), service_tier, speed, inference_geo.
void refuse_unsupported(const json& body) {
  if (const json* config = find_field(body, "output_config");
      config != nullptr && config->is_object() && find_field(*config, "format") != nullptr) {
    throw bad("output_config.format",
              std::string("output_config.format (structured output) ") + kNoTools);
  }
  if (find_field(body, "container") != nullptr) {
    throw bad("container", "container: code execution containers are not supported");
  }
  if (const json* mcp = find_field(body, "mcp_servers"); mcp != nullptr && !mcp->empty()) {
    throw bad("mcp_servers", "mcp_servers: MCP servers are not supported by this server");
  }
  if (const json* thinking = find_field(body, "thinking");
      thinking != nullptr &&
      !(thinking->is_object() && thinking->value("type", "") == "disabled")) {
    throw bad("thinking",
              "thinking: extended thinking is not supported by this server; remove it or send "
              "{\"type\": \"disabled\"}");
  }
}

// The generation fields, checked where Anthropic's rules differ from OpenAI's and copied into the
// chat body (whose parser checks the rest under the same names).
void translate_sampling(const json& body, json& chat) {
  const json* max_tokens = find_field(body, "max_tokens");
  if (max_tokens == nullptr) {
    throw bad("max_tokens",
              "max_tokens: required (the most tokens to generate before stopping), e.g. 1024");
  }
  if (!max_tokens->is_number_integer()) {
    throw bad("max_tokens", "max_tokens: expected an integer, got " + max_tokens->dump());
  }
  chat["max_tokens"] = *max_tokens;
  if (const json* t = find_field(body, "temperature"); t != nullptr) {
    if (!t->is_number()) throw bad("temperature", "temperature: expected a number");
    const double v = t->get<double>();
    if (!(v >= 0 && v <= 1)) {
      throw bad("temperature", "temperature = " + t->dump() + ": must be in [0, 1]");
    }
    chat["temperature"] = *t;
  }
  if (const json* stops = find_field(body, "stop_sequences"); stops != nullptr) {
    if (!stops->is_array() ||
        !std::all_of(stops->begin(), stops->end(), [](const json& s) { return s.is_string(); })) {
      throw bad("stop_sequences", "stop_sequences: expected an array of strings");
    }
    if (stops->size() > 16) throw bad("stop_sequences", "stop_sequences: at most 16 strings");
    for (const json& s : *stops) {
      if (s.get_ref<const std::string&>().empty()) {
        throw bad("stop_sequences", "stop_sequences: the strings must not be empty");
      }
    }
    chat["stop"] = *stops;
  }
  if (const json* meta = find_field(body, "metadata"); meta != nullptr) {
    if (!meta->is_object()) throw bad("metadata", "metadata: expected an object");
    if (const json* user = find_field(*meta, "user_id"); user != nullptr) {
      if (!user->is_string()) throw bad("metadata.user_id", "metadata.user_id: expected a string");
      chat["user"] = *user;
    }
  }
  // Same names and meaning in both APIs, or plinth's own extensions.
  static constexpr std::array<const char*, 6> kSame = {"top_p",      "top_k",       "stream",
                                                       "cache_salt", "speculative", "seed"};
  for (const char* key : kSame) {
    if (const json* v = find_field(body, key); v != nullptr) chat[key] = *v;
  }
}

}  // namespace

Translated translate(const json& body, bool count_only) {
  refuse_unsupported(body);
  std::vector<ChatMessage> conversation;
  if (const json* system = find_field(body, "system"); system != nullptr) {
    conversation.push_back({"system", content_text(*system, "system")});
  }
  std::vector<ChatMessage> turns = read_messages(body);
  conversation.insert(conversation.end(), turns.begin(), turns.end());
  json chat = json::object();
  if (const json* model = find_field(body, "model"); model != nullptr) chat["model"] = *model;
  json messages = json::array();
  for (const ChatMessage& m : conversation) messages.push_back(chat_message_json(m));
  chat["messages"] = std::move(messages);
  translate_tools(body, chat);
  if (!count_only) translate_sampling(body, chat);
  return {std::move(chat), std::move(conversation)};
}

namespace {

// The chat body as text, the tools' input_schema in the client's member order
// (client_order.hpp).
std::string chat_text(const json& chat, const json& body, std::string_view text) {
  std::vector<CopiedValue> copied;
  if (const json* tools = find_field(body, "tools"); tools != nullptr && tools->is_array()) {
    for (size_t i = 0; i < tools->size(); ++i) {
      const std::string at = "/tools/" + std::to_string(i);
      copied.push_back({at + "/input_schema", at + "/function/parameters"});
    }
  }
  return chat_text_in_client_order(chat, text, copied);
}

}  // namespace

PreparedGeneration prepare_messages(std::string_view text, const EngineHost& host,
                                    const ParseLimits& limits, std::string id) {
  const json body = parse_json_object(text);
  Translated t = translate(body, false);
  PreparedGeneration p;
  try {
    p.api = parse_request(ApiKind::kChat, chat_text(t.chat_body, body, text), host, limits);
  } catch (const ApiError& e) {
    throw renamed(e);
  }
  p.response = std::make_unique<MessagesResponse>(
      std::move(id), p.api.model, p.api.stream, static_cast<uint32_t>(p.api.prompts.front().size()),
      p.api.params.stop, p.api.tools);
  return p;
}

std::string count_tokens_response(std::string_view text, const EngineHost& host,
                                  const ParseLimits& limits) {
  const json body = parse_json_object(text);
  if (const json* model = find_field(body, "model"); model != nullptr) {
    if (!model->is_string()) throw bad("model", "model: expected a string");
    const auto& name = model->get_ref<const std::string&>();
    if (!name.empty() && name != limits.served_model_name && name != host.model_name()) {
      throw ApiError(404, "not_found_error",
                     "The model `" + name + "` does not exist; this server serves `" +
                         limits.served_model_name + "`",
                     "model", "model_not_found");
    }
  }
  Translated t = translate(body, true);
  size_t n = 0;
  if (uses_tools(t.messages, body)) {
    // Tools and tool turns are rendered by the chat parser (the template's way or the envelope).
    json chat = t.chat_body;
    chat["max_tokens"] = 1;
    try {
      return dump_json(
          {{"input_tokens", parse_request(ApiKind::kChat, chat_text(chat, body, text), host, limits)
                                .prompts.front()
                                .size()}});
    } catch (const ApiError& e) {
      throw renamed(e);
    }
  }
  try {
    n = host.encode_chat(t.messages).size();
  } catch (const std::invalid_argument& e) {
    throw bad("messages", std::string("messages: ") + e.what());
  }
  return dump_json({{"input_tokens", n}});
}

std::string error_body(unsigned status, const std::string& openai_body) {
  std::string message = openai_body;
  try {
    message = json::parse(openai_body).at("error").at("message").get<std::string>();
  } catch (const json::exception&) {  // not ApiError's shape: keep the text as it is
  }
  const char* type = nullptr;
  switch (status) {
    case 400:
    case 422:
      type = "invalid_request_error";
      break;
    case 401:
      type = "authentication_error";
      break;
    case 403:
      type = "permission_error";
      break;
    case 404:
      type = "not_found_error";
      break;
    case 413:
      type = "request_too_large";
      break;
    case 429:
      type = "rate_limit_error";
      break;
    case 503:
      type = "overloaded_error";
      break;
    default:
      type = status < 500 ? "invalid_request_error" : "api_error";
      break;
  }
  return dump_json({{"type", "error"}, {"error", {{"type", type}, {"message", message}}}});
}

MessagesResponse::MessagesResponse(std::string id, std::string model, bool stream,
                                   uint32_t input_tokens, std::vector<std::string> stop,
                                   const std::shared_ptr<const ToolRequest>& tools)
    : id_(std::move(id)),
      model_(std::move(model)),
      stream_(stream),
      input_tokens_(input_tokens),
      stop_(std::move(stop)) {
  if (tools) {
    tool_parser_ = make_tool_call_parser(*tools);
  }
}

std::string MessagesResponse::close_block() {
  if (open_block_ < 0) return {};
  std::string out =
      sse_event("content_block_stop", {{"type", "content_block_stop"}, {"index", open_block_}});
  open_block_ = -1;
  return out;
}

std::string MessagesResponse::tool_events(const std::vector<ToolEvent>& events) {
  std::string out;
  for (const ToolEvent& e : events) {
    tool_result_.apply(e);
    switch (e.kind) {
      case ToolEvent::Kind::kContent:
        if (open_block_ < 0 || !open_is_text_) {
          out += close_block();
          open_block_ = next_block_++;
          open_is_text_ = true;
          out += sse_event("content_block_start",
                           {{"type", "content_block_start"},
                            {"index", open_block_},
                            {"content_block", {{"type", "text"}, {"text", ""}}}});
        }
        out += sse_event("content_block_delta",
                         {{"type", "content_block_delta"},
                          {"index", open_block_},
                          {"delta", {{"type", "text_delta"}, {"text", e.text}}}});
        break;
      case ToolEvent::Kind::kCallStart:
        out += close_block();
        if (tool_ids_.size() <= e.index) tool_ids_.resize(e.index + 1);
        tool_ids_[e.index] = random_tool_id("toolu_");
        open_block_ = next_block_++;
        open_is_text_ = false;
        out += sse_event("content_block_start", {{"type", "content_block_start"},
                                                 {"index", open_block_},
                                                 {"content_block",
                                                  {{"type", "tool_use"},
                                                   {"id", tool_ids_[e.index]},
                                                   {"name", e.text},
                                                   {"input", json::object()}}}});
        break;
      case ToolEvent::Kind::kArguments:
        if (open_block_ >= 0 && !open_is_text_) {
          out += sse_event("content_block_delta",
                           {{"type", "content_block_delta"},
                            {"index", open_block_},
                            {"delta", {{"type", "input_json_delta"}, {"partial_json", e.text}}}});
        }
        break;
    }
  }
  return out;
}

json MessagesResponse::tool_content() const {
  json content = json::array();
  if (tool_result_.has_content && !tool_result_.content.empty()) {
    content.push_back({{"type", "text"}, {"text", tool_result_.content}});
  }
  for (size_t i = 0; i < tool_result_.calls.size() && i < tool_ids_.size(); ++i) {
    if (tool_ids_[i].empty()) continue;
    json input = json::parse(tool_result_.calls[i].arguments, nullptr, false);
    if (!input.is_object()) input = json::object();  // cut short by max_tokens
    content.push_back({{"type", "tool_use"},
                       {"id", tool_ids_[i]},
                       {"name", tool_result_.calls[i].name},
                       {"input", std::move(input)}});
  }
  return content;
}

json MessagesResponse::usage() const {
  return {{"input_tokens", input_tokens_}, {"output_tokens", output_tokens_}};
}

json MessagesResponse::stop_reason() const {
  if (finish_reason_ == "length") return "max_tokens";
  if (finish_reason_ == "stop" && !tool_result_.calls.empty()) return "tool_use";
  if (finish_reason_ == "stop") return stop_index_ >= 0 ? "stop_sequence" : "end_turn";
  return nullptr;  // aborted: no reason Anthropic names
}

json MessagesResponse::stop_sequence() const {
  if (finish_reason_ == "stop" && stop_index_ >= 0 &&
      static_cast<size_t>(stop_index_) < stop_.size()) {
    return stop_[static_cast<size_t>(stop_index_)];
  }
  return nullptr;
}

std::string MessagesResponse::on_event(size_t, const StreamEvent& ev) {
  if (finished_) return {};
  text_ += ev.text_delta;
  output_tokens_ = std::max(output_tokens_, ev.num_generated_tokens);
  std::vector<ToolEvent> events;
  if (tool_parser_) {
    feed_reply(*tool_parser_, ev.text_delta, ev.trigger_offset, ev.finished, events);
    if (!stream_) {
      for (const ToolEvent& e : events) {
        tool_result_.apply(e);
        if (e.kind == ToolEvent::Kind::kCallStart) {
          if (tool_ids_.size() <= e.index) tool_ids_.resize(e.index + 1);
          tool_ids_[e.index] = random_tool_id("toolu_");
        }
      }
    }
  }
  if (ev.finished) {
    finished_ = true;
    finish_reason_ = ev.finish_reason;
    stop_index_ = ev.stop_string;
    if (ev.finish_reason == "error") {
      error_ = ev.error;
      error_status_ = ev.error_status;
      error_param_ = ev.error_param;
    }
  }
  if (!stream_) return {};
  std::string out;
  if (!started_) {
    started_ = true;
    out += sse_event("message_start", {{"type", "message_start"},
                                       {"message",
                                        {{"id", id_},
                                         {"type", "message"},
                                         {"role", "assistant"},
                                         {"content", json::array()},
                                         {"model", model_},
                                         {"stop_reason", nullptr},
                                         {"stop_sequence", nullptr},
                                         {"usage", usage()}}}});
    if (!tool_parser_) {
      out +=
          sse_event("content_block_start", {{"type", "content_block_start"},
                                            {"index", 0},
                                            {"content_block", {{"type", "text"}, {"text", ""}}}});
    }
    out += sse_event("ping", {{"type", "ping"}});
  }
  if (tool_parser_) {
    out += tool_events(events);
  } else if (!ev.text_delta.empty()) {
    out += sse_event("content_block_delta",
                     {{"type", "content_block_delta"},
                      {"index", 0},
                      {"delta", {{"type", "text_delta"}, {"text", ev.text_delta}}}});
  }
  if (ev.finish_reason == "error") {
    out += sse_event("error",
                     json::parse(error_body(static_cast<unsigned>(ev.error_status),
                                            dump_json({{"error", {{"message", ev.error}}}}))));
  }
  return out;
}

std::string MessagesResponse::stream_end() const {
  if (!error_.empty()) return {};  // the error event ended the stream
  std::string out;
  if (tool_parser_) {
    if (open_block_ >= 0) {
      out +=
          sse_event("content_block_stop", {{"type", "content_block_stop"}, {"index", open_block_}});
    }
  } else {
    out += sse_event("content_block_stop", {{"type", "content_block_stop"}, {"index", 0}});
  }
  out += sse_event("message_delta",
                   {{"type", "message_delta"},
                    {"delta", {{"stop_reason", stop_reason()}, {"stop_sequence", stop_sequence()}}},
                    {"usage", usage()}});
  out += sse_event("message_stop", {{"type", "message_stop"}});
  return out;
}

std::string MessagesResponse::body() const {
  return dump_json({{"id", id_},
                    {"type", "message"},
                    {"role", "assistant"},
                    {"model", model_},
                    {"content", tool_parser_ ? tool_content()
                                             : json::array({{{"type", "text"}, {"text", text_}}})},
                    {"stop_reason", stop_reason()},
                    {"stop_sequence", stop_sequence()},
                    {"usage", usage()}});
}

}  // namespace plinth::server::anthropic
