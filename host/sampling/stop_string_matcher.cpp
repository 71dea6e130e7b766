#include "sampling/stop_string_matcher.hpp"

#include <algorithm>
#include <stdexcept>
#include <utility>

namespace plinth {

StopStringMatcher::StopStringMatcher(std::vector<std::string> stops) : stops_(std::move(stops)) {
  for (size_t i = 0; i < stops_.size(); ++i) {
    if (stops_[i].empty()) {
      throw std::invalid_argument("StopStringMatcher: stop[" + std::to_string(i) +
                                  "] is empty; stop strings must be non-empty");
    }
    max_len_ = std::max(max_len_, stops_[i].size());
  }
}

StopStringMatcher::Result StopStringMatcher::feed(std::string_view delta) {
  if (stopped_index_) return {"", true, stopped_index_};
  pending_.append(delta);

  // pending_ held no complete stop before this delta, so any match found now ends inside it.
  size_t best_end = std::string::npos, best_start = 0, best_index = 0;
  for (size_t i = 0; i < stops_.size(); ++i) {
    const size_t start = pending_.find(stops_[i]);
    if (start == std::string::npos) continue;
    const size_t end = start + stops_[i].size();
    if (end < best_end || (end == best_end && start < best_start)) {
      best_end = end;
      best_start = start;
      best_index = i;
    }
  }
  if (best_end != std::string::npos) {
    stopped_index_ = best_index;
    Result r{pending_.substr(0, best_start), true, best_index};
    pending_.clear();
    return r;
  }

  const size_t hold = partial_suffix_length();
  Result r{pending_.substr(0, pending_.size() - hold), false, std::nullopt};
  pending_.erase(0, pending_.size() - hold);
  return r;
}

std::string StopStringMatcher::flush() {
  std::string out;
  out.swap(pending_);
  return out;
}

size_t StopStringMatcher::partial_suffix_length() const {
  const size_t longest = std::min(pending_.size(), max_len_ == 0 ? 0 : max_len_ - 1);
  for (size_t len = longest; len > 0; --len) {
    const std::string_view suffix = std::string_view(pending_).substr(pending_.size() - len);
    for (const auto& s : stops_) {
      if (s.size() > len && std::string_view(s).substr(0, len) == suffix) return len;
    }
  }
  return 0;
}

}  // namespace plinth
