#pragma once
// One HTTP request's access record: the access log line (spdlog, info) and the
// plinth_http_requests_total{route,status} counter when its response is complete, and an error
// line naming the cause for every 5xx. Internal to host/server/; one per connection, reused for
// each request on it (HttpSession's strand only).
//
// The line: `METHOD ROUTE STATUS prompt_tokens=P generation_tokens=G ttft=Xs latency=Ys`, tokens
// summed over the request's choices, ttft "-" when no token was generated.

#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

namespace spdlog {
class logger;
}

namespace plinth {
class MetricsRegistry;
}

namespace plinth::server {

struct StreamEvent;

class AccessLog {
 public:
  AccessLog(spdlog::logger& logger, MetricsRegistry& metrics)
      : logger_(logger), metrics_(metrics) {}

  /// A request arrived: `target` without its query string.
  void begin(std::string method, const std::string& target);
  /// An engine event of choice `index` (token counts so far, first token time).
  void on_event(size_t index, const StreamEvent& event);
  /// The response is complete (or the client left: `status` 499, not counted). For a 5xx,
  /// `body` (the JSON error) is logged as the cause. Ends the record; later calls until the
  /// next begin() are ignored.
  void end(unsigned status, const std::string& body = {});

  /// The `route` label of a target: the known routes (and the chat page's files) as they are,
  /// /v1/models/{model} for a model id, "unmatched" for anything else (so that clients cannot
  /// grow the label set).
  static std::string route_of(const std::string& target);

 private:
  spdlog::logger& logger_;
  MetricsRegistry& metrics_;
  bool open_ = false;
  std::string method_, route_;
  std::chrono::steady_clock::time_point start_;
  double ttft_ = -1;
  std::vector<uint32_t> prompt_tokens_, generation_tokens_;  // per choice, latest
};

}  // namespace plinth::server
