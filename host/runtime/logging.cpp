#include "runtime/logging.hpp"

#include <array>
#include <stdexcept>
#include <string>

#include <spdlog/sinks/stdout_color_sinks.h>

namespace plinth {

spdlog::level::level_enum parse_log_level(std::string_view name) {
  static constexpr std::array<std::pair<std::string_view, spdlog::level::level_enum>, 7> kLevels = {
      {
          {"trace", spdlog::level::trace},
          {"debug", spdlog::level::debug},
          {"info", spdlog::level::info},
          {"warn", spdlog::level::warn},
          {"error", spdlog::level::err},
          {"critical", spdlog::level::critical},
          {"off", spdlog::level::off},
      }};
  for (const auto& [n, level] : kLevels) {
    if (n == name) return level;
  }
  throw std::invalid_argument("unknown log level '" + std::string(name) +
                              "': use one of trace, debug, info, warn, error, critical, off");
}

std::shared_ptr<spdlog::logger> make_stderr_logger(spdlog::level::level_enum level) {
  auto sink = std::make_shared<spdlog::sinks::stderr_color_sink_mt>();
  auto logger = std::make_shared<spdlog::logger>("plinth", std::move(sink));
  logger->set_pattern("[%H:%M:%S.%e] [%^%l%$] %v");
  logger->set_level(level);
  return logger;
}

}  // namespace plinth
