#pragma once
// The routes beside OpenAI's chat and completions (internal to host/server/; HttpSession::
// handle_extra_routes in api_routes.cpp):
//   POST /v1/messages, POST /v1/messages/count_tokens   the Anthropic Messages API
//   POST /v1/responses                                  the OpenAI Responses API
//   GET  /, /chat.js, /chat.css                         the chat page (ServerOptions::web_ui)

#include <string_view>

namespace plinth::server {

/// Whether `target` (without its query) is an Anthropic route, whose errors take Anthropic's
/// shape.
inline bool is_anthropic_route(std::string_view target) {
  if (auto q = target.find('?'); q != std::string_view::npos) target = target.substr(0, q);
  return target == "/v1/messages" || target == "/v1/messages/count_tokens";
}

}  // namespace plinth::server
