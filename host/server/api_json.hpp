#pragma once
// Small JSON helpers shared by the Anthropic and Responses API adapters (internal to host/server/).

#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "server/api_error.hpp"
#include "server/response_builder.hpp"

namespace plinth::server {

/// The request body as a JSON object. Throws ApiError 400 (not JSON, or not an object).
inline nlohmann::json parse_json_object(std::string_view text) {
  nlohmann::json body;
  try {
    body = nlohmann::json::parse(text);
  } catch (const nlohmann::json::exception& e) {
    throw ApiError(400, "invalid_request_error",
                   std::string("the body is not valid JSON: ") + e.what());
  }
  if (!body.is_object()) {
    throw ApiError(400, "invalid_request_error", "the body must be a JSON object");
  }
  return body;
}

/// One named server-sent event: "event: NAME\ndata: JSON\n\n" (Anthropic's and the Responses
/// API's streams name every event).
inline std::string sse_event(const std::string& name, const nlohmann::json& data) {
  return "event: " + name + "\ndata: " + dump_json(data) + "\n\n";
}

/// `key` of `body` when present and not null, else nullptr.
inline const nlohmann::json* find_field(const nlohmann::json& body, const char* key) {
  auto it = body.find(key);
  return it == body.end() || it->is_null() ? nullptr : &*it;
}

}  // namespace plinth::server
