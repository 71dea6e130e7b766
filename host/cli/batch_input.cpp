#include "cli/batch_input.hpp"

#include <algorithm>
#include <array>
#include <stdexcept>
#include <string_view>
#include <vector>

#include "app/engine_host.hpp"
#include "server/api_error.hpp"
#include "server/client_order.hpp"
#include "server/tool_request.hpp"

namespace plinth::cli {

namespace {

using nlohmann::json;

// The request keys of POST /v1/completions and /v1/chat/completions that server/request_parser
// reads, plus the line's own "prompt", "messages" and "custom_id".
constexpr std::array<std::string_view, 32> kPlainKeys = {"prompt",
                                                         "messages",
                                                         "custom_id",
                                                         "max_tokens",
                                                         "max_completion_tokens",
                                                         "temperature",
                                                         "top_p",
                                                         "top_k",
                                                         "min_p",
                                                         "presence_penalty",
                                                         "frequency_penalty",
                                                         "repetition_penalty",
                                                         "seed",
                                                         "stop",
                                                         "stop_token_ids",
                                                         "ignore_eos",
                                                         "min_tokens",
                                                         "include_stop_str_in_output",
                                                         "skip_special_tokens",
                                                         "truncate_prompt_tokens",
                                                         "logit_bias",
                                                         "n",
                                                         "logprobs",
                                                         "top_logprobs",
                                                         "priority",
                                                         "cache_salt",
                                                         "user",
                                                         "speculative",
                                                         "model",
                                                         "stream",
                                                         "response_format",
                                                         "structured_outputs"};

std::string allowed_keys() {
  std::string s;
  for (std::string_view k : kPlainKeys) {
    if (!s.empty()) s += ", ";
    s += k;
  }
  return s;
}

// An OpenAI batch line must carry one (its output line is found by it); a plinth line may.
std::string read_custom_id(const json& j, const std::string& where, bool required) {
  auto it = j.find("custom_id");
  if (it == j.end() || it->is_null()) {
    if (!required) return {};
    throw std::invalid_argument(where +
                                "key \"custom_id\": " + (it == j.end() ? "missing" : "null") +
                                "; an OpenAI batch line needs one, a string unique within the "
                                "file (its output line carries it)");
  }
  if (!it->is_string()) {
    throw std::invalid_argument(where + "key \"custom_id\": expected a string, got " +
                                it->type_name());
  }
  if (required && it->get_ref<const std::string&>().empty()) {
    throw std::invalid_argument(where +
                                "key \"custom_id\": empty; an OpenAI batch line needs a "
                                "non-empty string, unique within the file");
  }
  return it->get<std::string>();
}

// Values nested deeper than a request's schemas may be (server/tool_request.hpp) are refused
// before anything writes them out: dump() recurses (100,000 nested arrays overflowed the stack).
void check_nesting(const json& object, const std::string& where, const std::string& prefix) {
  for (const auto& [key, value] : object.items()) {
    if (server::json_nesting(value) > server::kMaxToolNesting) {
      throw std::invalid_argument(where + "key \"" + prefix + key + "\": nested deeper than " +
                                  std::to_string(server::kMaxToolNesting) + " levels");
    }
  }
}

// The schemas of a line as its text has them (members in the line's order; `body` has sorted
// them): where each is in the line and in the body (OpenAI lines: their tools too, whole: a
// template that renders the tools writes each as the client gave it, and the parameters' order
// is the order the grammar writes the arguments in).
std::vector<server::CopiedValue> copied_schemas(bool openai, const json& body) {
  const std::string in = openai ? "/body" : "";
  std::vector<server::CopiedValue> out = {
      {in + "/response_format/json_schema/schema", "/response_format/json_schema/schema"},
      {in + "/structured_outputs/json", "/structured_outputs/json"}};
  if (auto tools = body.find("tools"); openai && tools != body.end() && tools->is_array()) {
    for (size_t i = 0; i < tools->size(); ++i) {
      const std::string at = "/tools/" + std::to_string(i);
      out.push_back({in + at, at});
    }
  }
  return out;
}

// A plinth line → the body the server would get, and its kind.
server::ApiKind plain_body(const json& line, const LineDefaults& d, const std::string& where,
                           json& body) {
  check_nesting(line, where, "");
  body = d.body;
  for (const auto& [key, value] : line.items()) {
    if (std::find(kPlainKeys.begin(), kPlainKeys.end(), key) == kPlainKeys.end()) {
      throw std::invalid_argument(where + "unknown key \"" + key +
                                  "\" (allowed: " + allowed_keys() + ")");
    }
    if (key != "custom_id") body[key] = value;
  }
  if (line.contains("prompt") && line.contains("messages")) {
    throw std::invalid_argument(where + "give \"prompt\" or \"messages\", not both");
  }
  if (!line.contains("prompt") && !line.contains("messages")) {
    throw std::invalid_argument(where + "needs \"prompt\" or \"messages\"");
  }
  if (line.contains("messages")) return server::ApiKind::kChat;
  if (!d.chat) return server::ApiKind::kCompletion;
  // --chat: the prompt text is the user's turn, after --system.
  const json& prompt = line.at("prompt");
  if (!prompt.is_string()) {
    throw std::invalid_argument(where + "key \"prompt\": with --chat, expected a string, got " +
                                std::string(prompt.type_name()));
  }
  json messages = json::array();
  if (!d.system.empty()) messages.push_back({{"role", "system"}, {"content", d.system}});
  messages.push_back({{"role", "user"}, {"content", prompt}});
  body.erase("prompt");
  body["messages"] = std::move(messages);
  return server::ApiKind::kChat;
}

// An OpenAI batch line → its body and kind.
server::ApiKind openai_body(const json& line, const std::string& where, json& body) {
  auto method = line.find("method");
  if (method != line.end() && *method != "POST") {
    throw std::invalid_argument(where + "key \"method\": " + method->dump() +
                                ": only \"POST\" is supported");
  }
  auto u = line.find("url");
  if (u == line.end()) {
    throw std::invalid_argument(where +
                                "key \"url\": required (\"/v1/completions\" or "
                                "\"/v1/chat/completions\")");
  }
  const json& url = *u;
  server::ApiKind kind;
  if (url == "/v1/completions") {
    kind = server::ApiKind::kCompletion;
  } else if (url == "/v1/chat/completions") {
    kind = server::ApiKind::kChat;
  } else {
    throw std::invalid_argument(where + "key \"url\": " + url.dump() +
                                ": expected \"/v1/completions\" or \"/v1/chat/completions\"");
  }
  auto b = line.find("body");
  if (b == line.end() || !b->is_object()) {
    throw std::invalid_argument(where + "key \"body\": required, the request body (an object)");
  }
  check_nesting(*b, where, "body.");
  body = *b;
  return kind;
}

}  // namespace

BatchItem parse_batch_line(const std::string& line, const std::string& where,
                           const LineDefaults& defaults, const EngineHost& host) {
  json j;
  try {
    j = json::parse(line);
  } catch (const json::exception& e) {  // parse_error; out_of_range for 1E400
    throw std::invalid_argument(where + "not valid JSON (" + e.what() + ")");
  }
  if (!j.is_object()) throw std::invalid_argument(where + "each line must be a JSON object");
  BatchItem item;
  item.where = where;
  item.openai = j.contains("url") || j.contains("body");
  item.custom_id = read_custom_id(j, where, item.openai);
  json body;
  const server::ApiKind kind =
      item.openai ? openai_body(j, where, body) : plain_body(j, defaults, where, body);
  body.erase("model");  // the manifest's model answers every line
  server::ParseLimits limits;
  limits.served_model_name = host.default_served_name();  // as `serve` answers
  try {
    item.api = server::parse_request(
        kind, server::chat_text_in_client_order(body, line, copied_schemas(item.openai, body)),
        host, limits);
  } catch (const server::ApiError& e) {
    if (auto option = defaults.option_of_key.find(e.param());
        !e.param().empty() && option != defaults.option_of_key.end()) {
      throw std::invalid_argument(option->second + ": " + e.what());
    }
    std::string key = e.param().empty() ? "" : "key \"" + e.param() + "\": ";
    throw std::invalid_argument(where + key + e.what());
  }
  item.api.stream = false;  // a batch writes whole answers
  if (item.api.grammar) {
    try {
      item.grammar = host.grammar().compile(*item.api.grammar);
    } catch (const GrammarSpecError& e) {
      throw std::invalid_argument(
          where + "key \"" +
          (body.contains("structured_outputs") ? "structured_outputs" : "response_format") +
          "\": the output constraint was refused: " + e.what());
    }
  }
  return item;
}

void check_unique_custom_id(const BatchItem& item, size_t line_number,
                            std::unordered_map<std::string, size_t>& seen) {
  if (item.custom_id.empty()) return;
  const auto [it, added] = seen.try_emplace(item.custom_id, line_number);
  if (!added) {
    throw std::invalid_argument(item.where + "key \"custom_id\": " + json(item.custom_id).dump() +
                                " is also the custom_id of line " + std::to_string(it->second) +
                                "; each line needs its own (results are matched by it)");
  }
}

}  // namespace plinth::cli
