#pragma once
// Reporting for `plinth generate`: the JSON line of one finished request and the run's figures
// (prompt and generated tokens, TTFT, TPOT, tokens/s).

#include <chrono>
#include <cstdio>
#include <span>
#include <vector>

#include <nlohmann/json.hpp>

#include "engine/engine.hpp"

namespace plinth::cli {

/// Wall time of a run, seconds.
class RunClock {
 public:
  RunClock() : start_(std::chrono::steady_clock::now()) {}
  void stop() {
    seconds_ = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  }
  double seconds() const { return seconds_; }

 private:
  std::chrono::steady_clock::time_point start_;
  double seconds_ = 0;
};

/// {"index", "text", "token_ids", "finish_reason", "prompt_tokens", "generated_tokens",
///  "ttft_s", "tpot_s", "e2e_s"} of a finished sequence, and "error" when a plugin failed it
///  (finish_reason "error").
nlohmann::json result_json(size_t index, const Sequence& seq);

/// Prints totals and medians over `ids` to `out`.
void print_summary(std::FILE* out, const Engine& engine, std::span<const uint64_t> ids,
                   const RunClock& clock);

}  // namespace plinth::cli
