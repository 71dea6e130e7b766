// HttpSession's routes of the Anthropic Messages API, the Responses API and the chat page
// (api_routes.hpp); the generation itself runs on HttpSession::run_generation like chat's.
#include "server/api_routes.hpp"

#include <chrono>
#include <string>

#include "server/anthropic_api.hpp"
#include "server/api_error.hpp"
#include "server/http_session.hpp"
#include "server/responses_api.hpp"
#include "server/web_assets.hpp"

namespace plinth::server {

namespace http = boost::beast::http;

namespace {

std::string unique_suffix(Server::State& state) {
  using namespace std::chrono;
  const auto now = duration_cast<seconds>(system_clock::now().time_since_epoch()).count();
  return std::to_string(now) + std::to_string(state.next_id++);
}

void require(const http::request<http::string_body>& req, http::verb verb,
             const std::string& target) {
  if (req.method() != verb) {
    throw ApiError(405, "invalid_request_error",
                   "method " + std::string(req.method_string()) + " is not allowed on " + target);
  }
}

}  // namespace

bool HttpSession::handle_extra_routes(const Request& req, const std::string& target) {
  if (target == "/v1/messages") {
    require(req, http::verb::post, target);
    PreparedGeneration p = anthropic::prepare_messages(
        req.body(), state_->engine.host(), state_->limits, "msg_" + unique_suffix(*state_));
    run_generation(p.api, std::move(p.response), p.max_tokens_field);
    return true;
  }
  if (target == "/v1/messages/count_tokens") {
    require(req, http::verb::post, target);
    respond(200,
            anthropic::count_tokens_response(req.body(), state_->engine.host(), state_->limits),
            "application/json");
    return true;
  }
  if (target == "/v1/responses") {
    require(req, http::verb::post, target);
    PreparedGeneration p = responses::prepare(req.body(), state_->engine.host(), state_->limits,
                                              "resp_" + unique_suffix(*state_));
    run_generation(p.api, std::move(p.response), p.max_tokens_field);
    return true;
  }
  if (!state_->options.web_ui) return false;
  const WebAsset* asset = find_web_asset(target);
  if (asset == nullptr) return false;
  require(req, http::verb::get, target);
  respond(200, std::string(asset->body), std::string(asset->content_type),
          {{"Cache-Control", "no-cache"}});
  return true;
}

}  // namespace plinth::server
