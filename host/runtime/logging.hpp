#pragma once
// The host's logger: spdlog writing to stderr, level set by `--log-level`.

#include <memory>
#include <string_view>

#include <spdlog/spdlog.h>

namespace plinth {

/// "trace", "debug", "info", "warn", "error", "critical", "off" -> the spdlog level; throws
/// std::invalid_argument naming the allowed values otherwise.
spdlog::level::level_enum parse_log_level(std::string_view name);
/// A new logger named "plinth" writing to stderr at `level` (not registered with spdlog's
/// registry, so any number may exist).
std::shared_ptr<spdlog::logger> make_stderr_logger(spdlog::level::level_enum level);

}  // namespace plinth
