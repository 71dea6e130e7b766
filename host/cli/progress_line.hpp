#pragma once
// The progress line of a long `plinth generate --prompts-file` run on a terminal:
//   "12/500 done | 843.2 generated tokens/s | ETA 3m07s"
// rewritten in place (\r) on stderr, at most every quarter second. Silent when stderr is not a
// terminal (a pipe or a file gets no \r noise); the caller also leaves it off when the results
// go to that terminal. Not thread-safe: one caller drives it.

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstdio>

namespace plinth::cli {

class ProgressLine {
 public:
  /// `total`: requests in the run. `enabled`: draw at all (false = every call does nothing).
  ProgressLine(std::FILE* out, size_t total, bool enabled);
  /// Whether `out` is a terminal (isatty).
  static bool is_terminal(std::FILE* out);

  /// `done` requests finished, `generated` tokens generated in all. Redraws when a quarter second
  /// passed since the last draw, or when `force`.
  void update(size_t done, uint64_t generated, bool force = false);
  /// Draws the last state and ends the line (a newline), so later text starts on its own line.
  void finish(size_t done, uint64_t generated);

 private:
  using Clock = std::chrono::steady_clock;
  std::FILE* out_;
  size_t total_;
  bool enabled_;
  Clock::time_point start_, last_;
  bool drawn_ = false;
};

}  // namespace plinth::cli
