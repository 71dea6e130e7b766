#include "server/request_parser.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <limits>
#include <stdexcept>

#include "server/api_error.hpp"
#include "server/structured_output.hpp"
#include "server/tool_envelope.hpp"

namespace plinth::server {

namespace {

using nlohmann::json;

std::string type_name(const json& v) {
  return v.type_name();
}

// Typed field readers: absent or null → nothing changes; a wrong type → 422 naming the field.
bool read_bool(const json& body, const char* key, bool& out) {
  auto it = body.find(key);
  if (it == body.end() || it->is_null()) return false;
  if (!it->is_boolean()) {
    throw ApiError::unprocessable(key,
                                  std::string(key) + ": expected a boolean, got " + type_name(*it));
  }
  out = it->get<bool>();
  return true;
}

bool read_number(const json& body, const char* key, float& out) {
  auto it = body.find(key);
  if (it == body.end() || it->is_null()) return false;
  if (!it->is_number()) {
    throw ApiError::unprocessable(key,
                                  std::string(key) + ": expected a number, got " + type_name(*it));
  }
  out = it->get<float>();
  return true;
}

// What a non-integer given for an integer field is: its type, or for a number its value and,
// when that is whole (1e12, 1.0, 2^64 — beyond 64 bits JSON integers parse as doubles), how to
// write it.
std::string integer_mismatch(const json& v) {
  if (!v.is_number()) return type_name(v);
  const double d = v.get<double>();
  if (std::isfinite(d) && d == std::floor(d)) {
    return v.dump() + " (write integers without a fraction or exponent, within 64 bits)";
  }
  return v.dump();
}

bool read_int(const json& body, const char* key, int64_t& out) {
  auto it = body.find(key);
  if (it == body.end() || it->is_null()) return false;
  if (!it->is_number_integer()) {
    throw ApiError::unprocessable(
        key, std::string(key) + ": expected an integer, got " + integer_mismatch(*it));
  }
  out = it->is_number_unsigned() ? static_cast<int64_t>(std::min<uint64_t>(
                                       it->get<uint64_t>(), std::numeric_limits<int64_t>::max()))
                                 : it->get<int64_t>();
  return true;
}

bool read_string(const json& body, const char* key, std::string& out) {
  auto it = body.find(key);
  if (it == body.end() || it->is_null()) return false;
  if (!it->is_string()) {
    throw ApiError::unprocessable(key,
                                  std::string(key) + ": expected a string, got " + type_name(*it));
  }
  out = it->get<std::string>();
  return true;
}

// The number of `key` as the body gives it (21, not the 21.0 or 2.0999999046325684 its double or
// float prints as); `v` when the body has none.
std::string as_given(const json& body, const char* key, double v) {
  const auto it = body.find(key);
  return it != body.end() && it->is_number() ? it->dump() : json(v).dump();
}

// `v`, read from `body`'s `key`, must lie in [lo, hi] (`range` says so in the message).
void check_range(const json& body, const char* key, double v, double lo, double hi,
                 const char* range) {
  if (!(v >= lo && v <= hi)) {
    throw ApiError::invalid(
        key, std::string(key) + " = " + as_given(body, key, v) + ": must be in " + range);
  }
}

std::vector<int32_t> token_array(const json& a, const char* key) {
  std::vector<int32_t> ids;
  for (const json& t : a) {
    if (!t.is_number_integer()) {
      throw ApiError::unprocessable(key, std::string(key) + ": token arrays hold integers");
    }
    // Range-checked before narrowing: 4294967301 must not wrap around into token 5.
    const bool fits = t.is_number_unsigned()
                          ? t.get<uint64_t>() <= INT32_MAX
                          : t.get<int64_t>() >= INT32_MIN && t.get<int64_t>() <= INT32_MAX;
    if (!fits) {
      throw ApiError::invalid(
          key, std::string(key) + ": token id " + t.dump() + " is outside the vocabulary");
    }
    ids.push_back(t.get<int32_t>());
  }
  return ids;
}

std::vector<int32_t> encode_text(const RequestModel& host, const std::string& text,
                                 const char* key) {
  try {
    return host.encode(text);
  } catch (const std::invalid_argument& e) {
    throw ApiError::invalid(key, std::string(key) + ": " + e.what());
  }
}

// prompt: a string, an array of strings, an array of token ids, or an array of such arrays.
std::vector<std::vector<int32_t>> parse_prompt(const json& body, const RequestModel& host,
                                               const ParseLimits& limits) {
  auto it = body.find("prompt");
  if (it == body.end() || it->is_null()) {
    throw ApiError::unprocessable("prompt", "prompt: required (a string or an array)");
  }
  std::vector<std::vector<int32_t>> prompts;
  if (it->is_string()) {
    prompts.push_back(encode_text(host, it->get<std::string>(), "prompt"));
  } else if (it->is_array() && !it->empty() && it->front().is_number_integer()) {
    prompts.push_back(token_array(*it, "prompt"));
  } else if (it->is_array()) {
    for (const json& p : *it) {
      if (p.is_string()) {
        prompts.push_back(encode_text(host, p.get<std::string>(), "prompt"));
      } else if (p.is_array()) {
        prompts.push_back(token_array(p, "prompt"));
      } else {
        throw ApiError::unprocessable(
            "prompt",
            "prompt: array elements must be strings or token arrays, got " + type_name(p));
      }
    }
  } else {
    throw ApiError::unprocessable("prompt",
                                  "prompt: expected a string or an array, got " + type_name(*it));
  }
  if (prompts.empty()) throw ApiError::invalid("prompt", "prompt: must not be an empty array");
  if (prompts.size() > static_cast<size_t>(limits.max_prompts)) {
    throw ApiError::invalid(
        "prompt", "prompt: at most " + std::to_string(limits.max_prompts) + " prompts per request");
  }
  const auto vocab = static_cast<int32_t>(host.vocab_size());
  for (const auto& p : prompts) {
    if (p.empty()) throw ApiError::invalid("prompt", "prompt: must hold at least one token");
    for (int32_t id : p) {
      if (id < 0 || id >= vocab) {
        throw ApiError::invalid("prompt", "prompt: token id " + std::to_string(id) +
                                              " is outside the vocabulary [0, " +
                                              std::to_string(vocab) + ")");
      }
    }
  }
  return prompts;
}

// One text part of a message's content array: {"type": "text", "text": ...}; `at` names it.
std::string text_part(const json& part, const std::string& at) {
  if (!part.is_object()) {
    throw ApiError::unprocessable(
        at,
        at + ": expected an object {\"type\": \"text\", \"text\": ...}, got " + type_name(part));
  }
  auto type = part.find("type");
  if (type == part.end() || !type->is_string()) {
    throw ApiError::unprocessable(at + ".type", at + ".type: required string \"text\"");
  }
  if (*type != "text") {
    throw ApiError::invalid(at + ".type",
                            at + ".type = " + type->dump() + ": only \"text\" parts are supported");
  }
  auto text = part.find("text");
  if (text == part.end() || !text->is_string()) {
    throw ApiError::unprocessable(
        at + ".text", at + ".text: required string" +
                          (text == part.end() ? std::string() : ", got " + type_name(*text)));
  }
  return text->get<std::string>();
}

// One message, messages[i]: {"role": ..., "content": string | [text parts]}.
ChatMessage parse_message(const json& m, size_t i) {
  const std::string where = "messages[" + std::to_string(i) + "]";
  if (!m.is_object()) throw ApiError::unprocessable(where, where + ": expected an object");
  ChatMessage msg;
  auto role = m.find("role");
  if (role == m.end() || !role->is_string()) {
    throw ApiError::unprocessable(where + ".role", where + ".role: required string");
  }
  msg.role = role->get<std::string>();
  // OpenAI's "developer" role (what its clients send for o1 and later models) is a system
  // message to the chat templates, as on /v1/responses.
  if (msg.role == "developer") msg.role = "system";
  auto content = m.find("content");
  if (content == m.end() || content->is_null()) {
    // OpenAI: only an assistant message (one that made tool calls) may go without content.
    if (msg.role != "assistant") {
      throw ApiError::unprocessable(where + ".content",
                                    where + ".content: required for role \"" + msg.role +
                                        "\" (a string or an array of text parts)");
    }
    msg.content = "";
  } else if (content->is_string()) {
    msg.content = content->get<std::string>();
  } else if (content->is_array()) {
    for (size_t j = 0; j < content->size(); ++j) {
      msg.content += text_part((*content)[j], where + ".content[" + std::to_string(j) + "]");
    }
  } else {
    throw ApiError::unprocessable(where + ".content", where +
                                                          ".content: expected a string or an "
                                                          "array of text parts, got " +
                                                          type_name(*content));
  }
  parse_message_tools(m, where, msg);
  // An assistant turn's reasoning given apart (vLLM's / llama-server's reasoning_content).
  if (auto r = m.find("reasoning_content"); r != m.end() && !r->is_null()) {
    if (!r->is_string()) {
      throw ApiError::unprocessable(
          where + ".reasoning_content",
          where + ".reasoning_content: expected a string or null, got " + type_name(*r));
    }
    msg.reasoning_content = r->get<std::string>();
  }
  return msg;
}

// chat_template_kwargs (vLLM's and llama-server's name): the template variables plinth's families
// take, {"enable_thinking": bool} (Qwen3).
ChatTemplate::RenderOptions parse_template_kwargs(const json& body) {
  ChatTemplate::RenderOptions o;
  auto it = body.find("chat_template_kwargs");
  if (it == body.end() || it->is_null()) return o;
  if (!it->is_object()) {
    throw ApiError::unprocessable("chat_template_kwargs",
                                  "chat_template_kwargs: expected an "
                                  "object, got " +
                                      type_name(*it));
  }
  for (const auto& [key, value] : it->items()) {
    const std::string at = "chat_template_kwargs." + key;
    if (key != "enable_thinking") {
      throw ApiError::invalid(at, at + ": not a variable plinth's chat templates take (they "
                                       "take enable_thinking)");
    }
    if (!value.is_boolean()) {
      throw ApiError::unprocessable(at, at + ": expected a boolean, got " + type_name(value));
    }
    o.enable_thinking = value.get<bool>();
  }
  return o;
}

// A template that renders the tools and the tool turns its own way: the tools as its variable;
// Mistral Nemo's 9-character ids, and its reply prefix.
void for_template_tools(const RequestModel& host, const ToolRequest* tools,
                        std::vector<ChatMessage>& messages, ChatTemplate::RenderOptions& options) {
  if (tools != nullptr && tools->calls_possible()) {
    for (const ToolFunction& f : tools->tools) options.tools.push_back(f.source.dump());
  }
  if (host.chat_tool_syntax() != ToolCallSyntax::kMistralNemo) return;
  // Its template takes 9-character ids: other ids (call_..., toolu_...) map to such ids.
  for (ChatMessage& m : messages) {
    for (ChatToolCall& c : m.tool_calls) c.id = mistral_call_id(c.id);
    if (m.role == "tool") m.tool_call_id = mistral_call_id(m.tool_call_id);
  }
  // required / named: the reply starts with the [TOOL_CALLS] control token, which a grammar
  // never lets through: it is written into the prompt, and the grammar holds the calls after it
  // (auto: the model samples it, a grammar trigger; the prompt ends as the template renders it).
  if (tools != nullptr && tools->format == ToolFormat::kMistralNemo &&
      tools->choice != ToolChoice::kAuto) {
    options.reply_prefix_marker = "[TOOL_CALLS]";
  }
}

// messages: [{"role": ..., "content": string | [{"type": "text", "text": ...}]}].
// `tools`: the request's tool calling (null: none); tool calls and results in the history and
// the tools themselves are rendered as the tool-call envelope (tool_envelope.hpp).
std::vector<int32_t> parse_messages(const json& body, const RequestModel& host,
                                    const ToolRequest* tools) {
  auto it = body.find("messages");
  if (it == body.end() || it->is_null()) {
    throw ApiError::unprocessable("messages", "messages: required (an array of messages)");
  }
  if (!it->is_array()) {
    throw ApiError::unprocessable("messages", "messages: expected an array, got " + type_name(*it));
  }
  if (it->empty()) throw ApiError::invalid("messages", "messages: must not be empty");
  std::vector<ChatMessage> messages;
  messages.reserve(it->size());
  for (size_t i = 0; i < it->size(); ++i) messages.push_back(parse_message((*it)[i], i));
  check_tool_history(messages);
  ChatTemplate::RenderOptions options = parse_template_kwargs(body);
  if (host.chat_supports_tools()) {
    for_template_tools(host, tools, messages, options);
  } else {
    const bool tool_history =
        std::any_of(messages.begin(), messages.end(),
                    [](const ChatMessage& m) { return m.role == "tool" || !m.tool_calls.empty(); });
    if (tool_history || (tools != nullptr && tools->calls_possible())) {
      messages = envelope_messages(std::move(messages), tools);
    }
  }
  try {
    return host.encode_chat(messages, options);
  } catch (const std::invalid_argument& e) {
    throw ApiError::invalid("messages", std::string("messages: ") + e.what());
  }
}

std::vector<std::string> parse_stop(const json& body) {
  auto it = body.find("stop");
  if (it == body.end() || it->is_null()) return {};
  std::vector<std::string> stop;
  if (it->is_string()) {
    stop.push_back(it->get<std::string>());
  } else if (it->is_array()) {
    for (const json& s : *it) {
      if (!s.is_string()) throw ApiError::unprocessable("stop", "stop: expected strings");
      stop.push_back(s.get<std::string>());
    }
  } else {
    throw ApiError::unprocessable("stop",
                                  "stop: expected a string or an array, got " + type_name(*it));
  }
  if (stop.size() > 16) throw ApiError::invalid("stop", "stop: at most 16 stop strings");
  for (const auto& s : stop) {
    if (s.empty()) throw ApiError::invalid("stop", "stop: stop strings must not be empty");
  }
  return stop;
}

// logit_bias: {"token id": bias in [-100, 100]}; ids range-checked against the vocabulary.
std::vector<std::pair<int32_t, float>> parse_logit_bias(const json& body, int64_t vocab) {
  auto it = body.find("logit_bias");
  if (it == body.end() || it->is_null()) return {};
  if (!it->is_object()) {
    throw ApiError::unprocessable(
        "logit_bias", "logit_bias: expected an object {\"token id\": bias}, got " + type_name(*it));
  }
  std::vector<std::pair<int32_t, float>> out;
  for (const auto& [key, value] : it->items()) {
    const std::string at = "logit_bias[\"" + key + "\"]";
    int64_t id = -1;
    const char* end = key.data() + key.size();
    auto [ptr, ec] = std::from_chars(key.data(), end, id);
    if (key.empty() || ec != std::errc() || ptr != end) {
      throw ApiError::invalid("logit_bias", at + ": keys must be token ids written as decimal "
                                                 "integers, e.g. {\"50256\": -100}");
    }
    if (id < 0 || id >= vocab) {
      throw ApiError::invalid("logit_bias", at + ": token id " + key +
                                                " is outside the vocabulary [0, " +
                                                std::to_string(vocab) + ")");
    }
    if (!value.is_number()) {
      throw ApiError::unprocessable("logit_bias",
                                    at + ": expected a number, got " + type_name(value));
    }
    const double bias = value.get<double>();
    if (!(bias >= -100.0 && bias <= 100.0)) {
      throw ApiError::invalid("logit_bias", at + " = " + value.dump() + ": must be in [-100, 100]");
    }
    out.emplace_back(static_cast<int32_t>(id), static_cast<float>(bias));
  }
  return out;
}

// stop_token_ids (vLLM): an array of token ids in [0, vocab).
std::vector<int32_t> parse_stop_token_ids(const json& body, int64_t vocab) {
  auto it = body.find("stop_token_ids");
  if (it == body.end() || it->is_null()) return {};
  if (!it->is_array()) {
    throw ApiError::unprocessable(
        "stop_token_ids", "stop_token_ids: expected an array of token ids, got " + type_name(*it));
  }
  std::vector<int32_t> ids = token_array(*it, "stop_token_ids");
  for (int32_t id : ids) {
    if (id < 0 || id >= vocab) {
      throw ApiError::invalid("stop_token_ids", "stop_token_ids: token id " + std::to_string(id) +
                                                    " is outside the vocabulary [0, " +
                                                    std::to_string(vocab) + ")");
    }
  }
  return ids;
}

}  // namespace

/// OpenAI fields plinth does not implement: a request that uses one gets a 400 naming it
/// rather than an answer that silently ignores it. A value that asks for nothing (an empty tools
/// list, tool_choice none) passes. echo and best_of are implemented for completions only (chat has
/// no such fields in OpenAI's API), tools and tool_choice for chat only (parse_tool_request; the
/// deprecated functions / function_call are refused). response_format is read by
/// parse_structured_output.
void refuse_unsupported(const json& body, ApiKind kind) {
  static constexpr const char* kFields[] = {"echo",        "best_of",   "suffix",       "tools",
                                            "tool_choice", "functions", "function_call"};
  for (const char* key : kFields) {
    auto it = body.find(key);
    if (it == body.end() || it->is_null()) continue;
    const json& v = *it;
    const std::string k = key;
    if (kind == ApiKind::kCompletion && (k == "echo" || k == "best_of")) continue;
    if (kind == ApiKind::kChat && (k == "tools" || k == "tool_choice")) continue;
    const bool asks_nothing = (k == "echo" && v == false) || (k == "best_of" && v == 1) ||
                              ((k == "tools" || k == "functions") && v.empty()) ||
                              ((k == "tool_choice" || k == "function_call") && v == "none");
    if (asks_nothing) continue;
    throw ApiError(400, "invalid_request_error",
                   "`" + k + "` is not supported by this server yet; remove it from the request", k,
                   "unsupported_parameter");
  }
}

namespace {

json parse_body(std::string_view text) {
  json body;
  try {
    body = json::parse(text);
  } catch (const json::exception& e) {
    // parse_error, and out_of_range for a number beyond double (e.g. 1E400)
    throw ApiError(400, "invalid_request_error",
                   std::string("the body is not valid JSON: ") + e.what());
  }
  if (!body.is_object()) {
    throw ApiError(400, "invalid_request_error", "the body must be a JSON object");
  }
  return body;
}

// model: absent or empty → the served name; another name than the served one or the model's → 404.
void read_model(const json& body, const RequestModel& host, const ParseLimits& limits,
                ApiRequest& r) {
  read_string(body, "model", r.model);
  if (!r.model.empty() && r.model != limits.served_model_name && r.model != host.model_name()) {
    throw ApiError(404, "not_found_error",
                   "The model `" + r.model + "` does not exist; this server serves `" +
                       limits.served_model_name + "`",
                   "model", "model_not_found");
  }
  if (r.model.empty()) r.model = limits.served_model_name;
}

// The sampling fields: temperature .. logit_bias (max_tokens, min_tokens and logprobs elsewhere).
void read_sampling(const json& body, const RequestModel& host, SamplingParams& p) {
  // OpenAI's defaults: temperature 1, top_p 1.
  read_number(body, "temperature", p.temperature);
  check_range(body, "temperature", p.temperature, 0.0, 2.0, "[0, 2]");
  if (read_number(body, "top_p", p.top_p) && !(p.top_p > 0 && p.top_p <= 1)) {
    throw ApiError::invalid("top_p",
                            "top_p = " + as_given(body, "top_p", p.top_p) + ": must be in (0, 1]");
  }
  int64_t v = 0;
  if (read_int(body, "top_k", v)) {
    if (v < -1) throw ApiError::invalid("top_k", "top_k: must be -1 or 0 (off) or >= 1");
    p.top_k = v <= 0 ? 0 : static_cast<int32_t>(std::min<int64_t>(v, 1 << 30));
  }
  if (read_number(body, "min_p", p.min_p)) check_range(body, "min_p", p.min_p, 0.0, 1.0, "[0, 1]");
  if (read_number(body, "presence_penalty", p.presence_penalty)) {
    check_range(body, "presence_penalty", p.presence_penalty, -2.0, 2.0, "[-2, 2]");
  }
  if (read_number(body, "frequency_penalty", p.frequency_penalty)) {
    check_range(body, "frequency_penalty", p.frequency_penalty, -2.0, 2.0, "[-2, 2]");
  }
  if (read_number(body, "repetition_penalty", p.repetition_penalty) &&
      !(p.repetition_penalty > 0 && p.repetition_penalty <= 10)) {
    throw ApiError::invalid("repetition_penalty", "repetition_penalty: must be in (0, 10]");
  }
  if (read_int(body, "seed", v)) p.seed = static_cast<uint64_t>(v);
  // vLLM's extension: keep generating past EOS and the template's end-of-turn tokens.
  read_bool(body, "ignore_eos", p.ignore_eos);
  if (!p.ignore_eos) p.stop_token_ids = host.stop_token_ids();
  for (int32_t id : parse_stop_token_ids(body, host.vocab_size())) p.stop_token_ids.push_back(id);
  p.stop = parse_stop(body);
  read_bool(body, "include_stop_str_in_output", p.include_stop_str_in_output);
  read_bool(body, "skip_special_tokens", p.skip_special_tokens);
  p.logit_bias = parse_logit_bias(body, host.vocab_size());
}

// n, stream and (completions) echo and best_of.
void read_choices(const json& body, ApiKind kind, const ParseLimits& limits, ApiRequest& r) {
  int64_t v = 0;
  if (read_int(body, "n", v)) {
    if (v < 1 || v > limits.max_n) {
      throw ApiError::invalid("n", "n = " + std::to_string(v) + ": must be in [1, " +
                                       std::to_string(limits.max_n) + "]");
    }
    r.n = static_cast<int32_t>(v);
  }
  read_bool(body, "stream", r.stream);
  if (kind != ApiKind::kCompletion) return;
  read_bool(body, "echo", r.echo);
  if (!read_int(body, "best_of", v)) return;
  if (v < r.n || v > limits.max_n) {
    throw ApiError::invalid("best_of", "best_of = " + std::to_string(v) +
                                           ": must be in [n = " + std::to_string(r.n) + ", " +
                                           std::to_string(limits.max_n) + "]");
  }
  r.best_of = static_cast<int32_t>(v);
  if (r.stream && r.best_of > 1) {
    throw ApiError::invalid("best_of",
                            "best_of > 1 cannot be streamed (OpenAI: the best candidates are "
                            "known only at the end); drop stream or best_of");
  }
}

// stream_options: {"include_usage": bool}.
void read_stream_options(const json& body, ApiRequest& r) {
  auto so = body.find("stream_options");
  if (so == body.end() || so->is_null()) return;
  if (!so->is_object()) {
    throw ApiError::unprocessable("stream_options", "stream_options: expected an object");
  }
  if (!r.stream) {  // as OpenAI answers
    throw ApiError::invalid("stream_options",
                            "stream_options: only allowed with \"stream\": true; drop it or "
                            "stream the response");
  }
  auto iu = so->find("include_usage");
  if (iu == so->end() || iu->is_null()) return;
  if (!iu->is_boolean()) {
    throw ApiError::unprocessable(
        "stream_options.include_usage",
        "stream_options.include_usage: expected a boolean, got " + type_name(*iu));
  }
  r.include_usage = iu->get<bool>();
}

// logprobs: completions take an integer (alternatives per token, OpenAI max 5, we allow 20);
// chat takes a boolean plus top_logprobs. Echo with logprobs is refused.
void read_logprobs(const json& body, ApiKind kind, ApiRequest& r) {
  int64_t v = 0;
  if (kind == ApiKind::kCompletion) {
    if (read_int(body, "logprobs", v)) {
      check_range(body, "logprobs", static_cast<double>(v), 0, kMaxLogprobs, "[0, 20]");
      r.logprobs = true;
      r.top_logprobs = static_cast<int32_t>(v);
    }
  } else {
    read_bool(body, "logprobs", r.logprobs);
    if (read_int(body, "top_logprobs", v)) {
      check_range(body, "top_logprobs", static_cast<double>(v), 0, kMaxLogprobs, "[0, 20]");
      if (!r.logprobs && v > 0) {
        throw ApiError::invalid("top_logprobs", "top_logprobs: requires logprobs: true");
      }
      r.top_logprobs = static_cast<int32_t>(v);
    }
  }
  r.params.logprobs = r.top_logprobs;
  if (r.echo && r.logprobs) {
    throw ApiError::invalid("echo",
                            "echo with logprobs is not supported (the prompt tokens' logprobs are "
                            "not computed); drop one of them");
  }
}

// truncate_prompt_tokens: keep each prompt's last v tokens.
void truncate_prompts(const json& body, ApiRequest& r) {
  int64_t v = 0;
  if (!read_int(body, "truncate_prompt_tokens", v)) return;
  if (v < 1) {
    throw ApiError::invalid("truncate_prompt_tokens",
                            "truncate_prompt_tokens = " + std::to_string(v) +
                                ": must be >= 1 (the number of last prompt tokens kept)");
  }
  for (auto& prompt : r.prompts) {
    if (static_cast<int64_t>(prompt.size()) > v) prompt.erase(prompt.begin(), prompt.end() - v);
  }
}

// max_tokens (chat: max_completion_tokens first), the prompt truncation, both checked against
// the context; then min_tokens. OpenAI's default max_tokens: 16 for completions, the rest of the
// context for chat.
void read_lengths(const json& body, ApiKind kind, const RequestModel& host, ApiRequest& r) {
  const int64_t context = host.context_length();
  int64_t max_tokens = 0;
  bool max_given = false;
  const char* max_key = "max_tokens";
  if (kind == ApiKind::kChat && read_int(body, "max_completion_tokens", max_tokens)) {
    max_key = "max_completion_tokens";
    max_given = true;
  } else {
    max_given = read_int(body, "max_tokens", max_tokens);
  }
  if (max_given && (max_tokens < 1 || max_tokens >= context)) {
    throw ApiError::invalid(max_key, std::string(max_key) + " = " + std::to_string(max_tokens) +
                                         ": must be in [1, " + std::to_string(context - 1) + "]");
  }
  truncate_prompts(body, r);
  size_t longest = 0;
  for (const auto& prompt : r.prompts) longest = std::max(longest, prompt.size());
  const auto prompt_len = static_cast<int64_t>(longest);
  if (prompt_len >= context) {
    throw ApiError(400, "invalid_request_error",
                   "This model's maximum context length is " + std::to_string(context) +
                       " tokens. However, the prompt has " + std::to_string(prompt_len) +
                       " tokens; shorten it to at most " + std::to_string(context - 1),
                   kind == ApiKind::kChat ? "messages" : "prompt", "context_length_exceeded");
  }
  if (!max_given) {
    max_tokens = kind == ApiKind::kCompletion ? 16 : context - prompt_len;
  } else if (prompt_len + max_tokens > context) {
    throw ApiError(400, "invalid_request_error",
                   "This model's maximum context length is " + std::to_string(context) +
                       " tokens. However, you requested " +
                       std::to_string(prompt_len + max_tokens) + " tokens (" +
                       std::to_string(prompt_len) + " in the prompt, " +
                       std::to_string(max_tokens) + " in the completion)",
                   max_key, "context_length_exceeded");
  }
  r.params.max_tokens = static_cast<int32_t>(max_tokens);
  r.max_tokens_given = max_given;
  int64_t v = 0;
  if (read_int(body, "min_tokens", v)) {
    if (v < 0 || v > max_tokens) {
      throw ApiError::invalid(
          "min_tokens", "min_tokens = " + std::to_string(v) +
                            ": must be in [0, max_tokens = " + std::to_string(max_tokens) + "]");
    }
    r.params.min_tokens = static_cast<int32_t>(v);
  }
}

// response_format beside tools that may be called (OpenAI: the reply is the calls or content
// following the schema): under tool_choice auto the reply without calls follows the schema;
// under required / named the reply is calls, so the schema has nothing to constrain. Refused
// (400 naming the pair) for a constraint other than JSON (structured_outputs regex / choice /
// grammar) and for Llama 3.x's format under auto (its call is a JSON object too: a reply and a
// call could not be told apart).
void combine_response_format(const ApiRequest& r, ToolRequest& tools) {
  const bool json = r.grammar->kind == PLINTH_GRAMMAR_JSON_SCHEMA ||
                    r.grammar->kind == PLINTH_GRAMMAR_JSON_OBJECT;
  if (!json) {
    throw ApiError::invalid(r.grammar_param, r.grammar_param +
                                                 " beside tools: only a JSON constraint "
                                                 "(response_format json_schema / json_object) "
                                                 "combines with tools; give one, or tool_choice "
                                                 "\"none\"");
  }
  if (tools.choice != ToolChoice::kAuto) return;
  const char* why = nullptr;
  if (tools.format == ToolFormat::kMistralNemo) {
    why =
        "Mistral Nemo's tool-call format (the reply before [TOOL_CALLS] is free text, which no "
        "schema holds there)";
  } else if (tools.format == ToolFormat::kLlama3Json) {
    why =
        "the Llama 3.x tool-call format (a call is a JSON object too, so a JSON reply and a "
        "call cannot be told apart)";
  }
  if (why != nullptr) {
    throw ApiError::invalid(
        r.grammar_param, r.grammar_param +
                             " beside tools with tool_choice \"auto\" is not supported by " + why +
                             "; use tool_choice \"required\", a named function, or \"none\"");
  }
  tools.response_schema = response_schema_of(*r.grammar);
}

// Mistral Nemo under tool_choice auto: the id of its [TOOL_CALLS] control token, which arms the
// grammar of the calls. A vocabulary that writes it as plain text (a template given by
// --chat-template to another model) cannot tell a call from text that looks like one: 400.
int32_t mistral_trigger(const RequestModel& host) {
  if (const std::optional<int32_t> id = host.special_token("[TOOL_CALLS]")) return *id;
  throw ApiError::invalid("tool_choice",
                          "tool_choice = \"auto\" with Mistral Nemo's tool-call format needs "
                          "[TOOL_CALLS] to be a special token of the model's vocabulary (the "
                          "calls' grammar starts when the model samples it); this model's "
                          "vocabulary writes it as plain text; use \"required\", a named "
                          "function, or \"none\"");
}

}  // namespace

ApiRequest parse_request(ApiKind kind, std::string_view text, const RequestModel& host,
                         const ParseLimits& limits) {
  const json body = parse_body(text);
  refuse_unsupported(body, kind);

  ApiRequest r;
  r.kind = kind;
  read_model(body, host, limits, r);
  read_sampling(body, host, r.params);
  read_choices(body, kind, limits, r);
  read_stream_options(body, r);
  int64_t v = 0;
  if (read_int(body, "priority", v)) {
    r.priority = static_cast<int32_t>(std::clamp<int64_t>(v, INT32_MIN, INT32_MAX));
  }
  read_string(body, "user", r.user);
  read_string(body, "cache_salt", r.cache_salt);
  read_bool(body, "speculative", r.speculative);
  read_logprobs(body, kind, r);
  r.grammar = parse_structured_output(body, text);
  if (r.grammar) {
    r.grammar_param = r.grammar->kind == PLINTH_GRAMMAR_JSON_SCHEMA ||
                              r.grammar->kind == PLINTH_GRAMMAR_JSON_OBJECT
                          ? "response_format"
                          : "structured_outputs";
  }

  std::optional<ToolRequest> tools;
  if (kind == ApiKind::kChat) tools = parse_tool_request(body, text);
  if (tools && tools->calls_possible()) {
    // The template's own call format (Qwen2.5's <tool_call>, Llama 3.x's JSON call: free text
    // until the call starts, then the call the grammar holds to the function's parameters;
    // Mistral Nemo's list of calls after the [TOOL_CALLS] the prompt ends with); else the
    // envelope.
    switch (host.chat_tool_syntax()) {
      case ToolCallSyntax::kHermes:
        tools->format = ToolFormat::kHermes;
        break;
      case ToolCallSyntax::kLlama3Json:
        tools->format = ToolFormat::kLlama3Json;
        break;
      case ToolCallSyntax::kMistralNemo:
        tools->format = ToolFormat::kMistralNemo;
        // auto: free text until the model samples the [TOOL_CALLS] control token, which arms
        // the grammar of the calls (a grammar trigger: no grammar lets a control token through).
        if (tools->choice == ToolChoice::kAuto) r.grammar_trigger = mistral_trigger(host);
        break;
      case ToolCallSyntax::kNone:
        break;
    }
    if (r.grammar) combine_response_format(r, *tools);
    r.grammar = tool_call_grammar(*tools);
    r.grammar_param = "tools";
    r.tools = std::make_shared<const ToolRequest>(*tools);
  }

  if (kind == ApiKind::kCompletion) {
    r.prompts = parse_prompt(body, host, limits);
  } else {
    r.prompts.push_back(parse_messages(body, host, tools ? &*tools : nullptr));
  }
  read_lengths(body, kind, host, r);
  try {
    validate(r.params);
  } catch (const std::invalid_argument& e) {
    throw ApiError::invalid("", e.what());
  }
  return r;
}

}  // namespace plinth::server
