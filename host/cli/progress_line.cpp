#include "cli/progress_line.hpp"

#include <unistd.h>

#include <cmath>
#include <string>

namespace plinth::cli {

namespace {

std::string duration_text(double secs) {
  const long long s = std::llround(secs);
  char buf[32];
  if (s >= 3600) {
    std::snprintf(buf, sizeof buf, "%lldh%02lldm", s / 3600, s / 60 % 60);
  } else if (s >= 60) {
    std::snprintf(buf, sizeof buf, "%lldm%02llds", s / 60, s % 60);
  } else {
    std::snprintf(buf, sizeof buf, "%llds", s);
  }
  return buf;
}

}  // namespace

ProgressLine::ProgressLine(std::FILE* out, size_t total, bool enabled)
    : out_(out), total_(total), enabled_(enabled), start_(Clock::now()), last_(start_) {}

bool ProgressLine::is_terminal(std::FILE* out) {
  return isatty(fileno(out)) == 1;
}

void ProgressLine::update(size_t done, uint64_t generated, bool force) {
  if (!enabled_) return;
  const Clock::time_point now = Clock::now();
  if (!force && drawn_ && now - last_ < std::chrono::milliseconds(250)) return;
  last_ = now;
  drawn_ = true;
  const double secs = std::chrono::duration<double>(now - start_).count();
  const double rate = secs > 0 ? static_cast<double>(generated) / secs : 0.0;
  // ETA from the requests' pace so far: the rest at the mean time per finished request.
  const std::string eta =
      done == 0
          ? "--"
          : duration_text(secs / static_cast<double>(done) * static_cast<double>(total_ - done));
  // \033[K clears what a longer earlier line left to the right.
  std::fprintf(out_, "\r%zu/%zu done | %.1f generated tokens/s | ETA %s\033[K", done, total_, rate,
               eta.c_str());
  std::fflush(out_);
}

void ProgressLine::finish(size_t done, uint64_t generated) {
  if (!enabled_) return;
  update(done, generated, true);
  std::fputc('\n', out_);
  std::fflush(out_);
}

}  // namespace plinth::cli
