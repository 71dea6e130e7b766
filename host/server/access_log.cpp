#include "server/access_log.hpp"

#include <spdlog/spdlog.h>

#include <array>
#include <numeric>
#include <string_view>

#include "runtime/metrics.hpp"
#include "server/async_engine.hpp"
#include "server/web_assets.hpp"

namespace plinth::server {

std::string AccessLog::route_of(const std::string& target) {
  static constexpr std::array<std::string_view, 11> kRoutes = {
      "/v1/completions", "/v1/chat/completions",
      "/v1/models",      "/tokenize",
      "/detokenize",     "/version",
      "/health",         "/metrics",
      "/v1/messages",    "/v1/messages/count_tokens",
      "/v1/responses"};
  for (std::string_view r : kRoutes) {
    if (target == r) return std::string(r);
  }
  if (target.rfind("/v1/models/", 0) == 0) return "/v1/models/{model}";
  if (find_web_asset(target) != nullptr) return target;  // the chat page's files
  return "unmatched";
}

void AccessLog::begin(std::string method, const std::string& target) {
  open_ = true;
  method_ = std::move(method);
  route_ = route_of(target);
  start_ = std::chrono::steady_clock::now();
  ttft_ = -1;
  prompt_tokens_.clear();
  generation_tokens_.clear();
}

void AccessLog::on_event(size_t index, const StreamEvent& event) {
  if (!open_) return;
  if (index >= prompt_tokens_.size()) {
    prompt_tokens_.resize(index + 1, 0);
    generation_tokens_.resize(index + 1, 0);
  }
  prompt_tokens_[index] = event.num_prompt_tokens;
  generation_tokens_[index] = event.num_generated_tokens;
  if (ttft_ < 0 && !event.token_ids.empty()) {
    ttft_ = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  }
}

void AccessLog::end(unsigned status, const std::string& body) {
  if (!open_) return;
  open_ = false;
  const double latency =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  if (status != 499) {
    const int64_t id = metrics_.register_metric(
        "plinth_http_requests_total", "HTTP responses by route and status code",
        PLINTH_METRIC_COUNTER, {{"route", route_}, {"status", std::to_string(status)}});
    metrics_.add(id, 1);
  }
  const auto sum = [](const std::vector<uint32_t>& v) {
    return std::accumulate(v.begin(), v.end(), uint64_t{0});
  };
  const std::string ttft = ttft_ < 0 ? "-" : fmt::format("{:.3f}s", ttft_);
  logger_.info("{} {} {} prompt_tokens={} generation_tokens={} ttft={} latency={:.3f}s", method_,
               route_, status, sum(prompt_tokens_), sum(generation_tokens_), ttft, latency);
  if (status >= 500) logger_.error("{} {} answered {}: {}", method_, route_, status, body);
}

}  // namespace plinth::server
