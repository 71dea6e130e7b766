#include "server/tokenize_api.hpp"

#include <stdexcept>
#include <vector>

#include <nlohmann/json.hpp>

#include "app/engine_host.hpp"
#include "server/api_error.hpp"
#include "server/response_builder.hpp"

namespace plinth::server {

namespace {

using nlohmann::json;

json parse_object(std::string_view text) {
  json body;
  try {
    body = json::parse(text);
  } catch (const json::exception& e) {
    throw ApiError(400, "invalid_request_error",
                   std::string("the body is not valid JSON: ") + e.what());
  }
  if (!body.is_object()) {
    throw ApiError(400, "invalid_request_error", "the body must be a JSON object");
  }
  return body;
}

// An optional field: absent or null → nullptr; present with another type than `want` → 400.
const json* field(const json& body, const char* key, json::value_t want, const char* what) {
  auto it = body.find(key);
  if (it == body.end() || it->is_null()) return nullptr;
  if (it->type() != want) {
    throw ApiError::invalid(key,
                            std::string(key) + ": expected " + what + ", got " + it->type_name());
  }
  return &*it;
}

bool read_bool(const json& body, const char* key, bool fallback) {
  const json* v = field(body, key, json::value_t::boolean, "a boolean");
  return v ? v->get<bool>() : fallback;
}

void check_model(const json& body, const EngineHost& host, const std::string& served) {
  const json* m = field(body, "model", json::value_t::string, "a string");
  if (!m) return;
  const auto& name = m->get_ref<const std::string&>();
  if (!name.empty() && name != served && name != host.model_name()) {
    throw ApiError(404, "not_found_error",
                   "The model `" + name + "` does not exist; this server serves `" + served + "`",
                   "model", "model_not_found");
  }
}

// messages: [{"role": string, "content": string | [{"type": "text", "text": string}] | null}].
std::vector<ChatMessage> read_messages(const json& m) {
  if (!m.is_array()) {
    throw ApiError::invalid("messages",
                            std::string("messages: expected an array, got ") + m.type_name());
  }
  if (m.empty()) throw ApiError::invalid("messages", "messages: must not be empty");
  std::vector<ChatMessage> out;
  for (size_t i = 0; i < m.size(); ++i) {
    const json& msg = m[i];
    const std::string where = "messages[" + std::to_string(i) + "]";
    if (!msg.is_object()) throw ApiError::invalid(where, where + ": expected an object");
    auto role = msg.find("role");
    if (role == msg.end() || !role->is_string()) {
      throw ApiError::invalid(where + ".role", where + ".role: required string");
    }
    ChatMessage cm;
    cm.role = role->get<std::string>();
    auto content = msg.find("content");
    if (content == msg.end() || content->is_null()) {
      // empty content
    } else if (content->is_string()) {
      cm.content = content->get<std::string>();
    } else if (content->is_array()) {
      for (const json& part : *content) {
        if (!part.is_object() || part.value("type", "") != "text" || !part.contains("text") ||
            !part["text"].is_string()) {
          throw ApiError::invalid(
              where + ".content",
              where + ".content: only {\"type\": \"text\"} parts are supported");
        }
        cm.content += part["text"].get<std::string>();
      }
    } else {
      throw ApiError::invalid(where + ".content",
                              where +
                                  ".content: expected a string or an array of text parts, got " +
                                  content->type_name());
    }
    out.push_back(std::move(cm));
  }
  return out;
}

std::vector<int32_t> encode_messages(const json& body, const json& messages,
                                     const EngineHost& host) {
  std::vector<ChatMessage> msgs = read_messages(messages);
  const bool generation_prompt = read_bool(body, "add_generation_prompt", true);
  // The chat endpoint's default: what a chat completion would be prompted with.
  const bool add_special = read_bool(body, "add_special_tokens", true);
  const ChatTemplate* chat = host.chat_template();
  if (!chat) {
    throw ApiError::invalid("messages",
                            "messages: this model has no chat template plinth "
                            "recognises (" +
                                host.chat_template_error() + "); send a plain prompt instead");
  }
  try {
    std::vector<Tokenizer::Segment> segments;
    for (const ChatTemplate::Segment& s : chat->render(msgs, generation_prompt)) {
      segments.push_back({s.text, s.special});
    }
    return host.tokenizer().encode_segments(segments, add_special);
  } catch (const std::invalid_argument& e) {
    throw ApiError::invalid("messages", std::string("messages: ") + e.what());
  }
}

}  // namespace

std::string tokenize_response(std::string_view text, const EngineHost& host,
                              const std::string& served_model_name) {
  const json body = parse_object(text);
  check_model(body, host, served_model_name);
  std::vector<int32_t> ids;
  if (const json* messages =
          body.contains("messages") && !body["messages"].is_null() ? &body["messages"] : nullptr) {
    ids = encode_messages(body, *messages, host);
  } else {
    // vLLM's "prompt" (special tokens by default) or llama.cpp's "content" (none by default).
    const char* key = body.contains("prompt") && !body["prompt"].is_null() ? "prompt" : "content";
    const json* p = field(body, key, json::value_t::string, "a string");
    if (!p) {
      throw ApiError::invalid("prompt",
                              "prompt: required (a string; or \"content\", or \"messages\")");
    }
    bool add_special = read_bool(body, "add_special", std::string(key) == "prompt");
    add_special = read_bool(body, "add_special_tokens", add_special);
    try {
      ids = host.tokenizer().encode(p->get_ref<const std::string&>(), add_special);
    } catch (const std::invalid_argument& e) {
      throw ApiError::invalid(key, std::string(key) + ": " + e.what());
    }
  }
  return dump_json(
      {{"tokens", ids}, {"count", ids.size()}, {"max_model_len", host.max_model_len()}});
}

std::string detokenize_response(std::string_view text, const EngineHost& host,
                                const std::string& served_model_name) {
  const json body = parse_object(text);
  check_model(body, host, served_model_name);
  const json* tokens = field(body, "tokens", json::value_t::array, "an array of token ids");
  if (!tokens) throw ApiError::invalid("tokens", "tokens: required (an array of token ids)");
  const int64_t vocab = host.config().vocab_size;
  std::vector<int32_t> ids;
  ids.reserve(tokens->size());
  for (size_t i = 0; i < tokens->size(); ++i) {
    const json& t = (*tokens)[i];
    if (!t.is_number_integer()) {
      throw ApiError::invalid(
          "tokens",
          "tokens[" + std::to_string(i) + "]: expected an integer token id, got " + t.type_name());
    }
    const bool in_range = t.is_number_unsigned()
                              ? t.get<uint64_t>() < static_cast<uint64_t>(vocab)
                              : t.get<int64_t>() >= 0 && t.get<int64_t>() < vocab;
    if (!in_range) {
      throw ApiError::invalid("tokens", "tokens[" + std::to_string(i) + "]: token id " + t.dump() +
                                            " is outside the vocabulary [0, " +
                                            std::to_string(vocab) + ")");
    }
    ids.push_back(static_cast<int32_t>(t.get<int64_t>()));
  }
  std::string out = host.tokenizer().decode(ids);
  return dump_json({{"prompt", out}, {"content", out}});
}

std::string percent_decode(std::string_view s) {
  auto hex = [](char c) -> int {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
  };
  std::string out;
  out.reserve(s.size());
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '%' && i + 2 < s.size() && hex(s[i + 1]) >= 0 && hex(s[i + 2]) >= 0) {
      out.push_back(static_cast<char>(hex(s[i + 1]) * 16 + hex(s[i + 2])));
      i += 2;
    } else {
      out.push_back(s[i]);
    }
  }
  return out;
}

}  // namespace plinth::server
