#pragma once
// What the host shares with every plugin instance: its logger and metrics registry, exposed to
// plugins as the plinth_host_api table (sdk/include/plinth/host_api.h).

#include <memory>

#include <spdlog/spdlog.h>

#include "plinth/host_api.h"
#include "runtime/metrics.hpp"

namespace plinth {

class HostContext {
 public:
  /// `logger` NULL = a stderr logger at level info.
  explicit HostContext(std::shared_ptr<spdlog::logger> logger = nullptr);
  HostContext(const HostContext&) = delete;
  HostContext& operator=(const HostContext&) = delete;

  spdlog::logger& logger() const { return *logger_; }
  const std::shared_ptr<spdlog::logger>& logger_ptr() const { return logger_; }
  MetricsRegistry& metrics() { return metrics_; }
  const MetricsRegistry& metrics() const { return metrics_; }
  /// The table handed to plugins in plinth_create_args.host; valid while this object lives (it
  /// must outlive every plugin instance). Its ctx points at this object.
  const plinth_host_api* api() const { return &api_; }

 private:
  std::shared_ptr<spdlog::logger> logger_;
  MetricsRegistry metrics_;
  plinth_host_api api_{};
};

}  // namespace plinth
