#include "ngram_proposer.hpp"

#include <algorithm>

namespace plinth::spec_decode {

std::vector<int32_t> ngram_propose(std::span<const int32_t> tokens, uint32_t min_n, uint32_t max_n,
                                   uint32_t k) {
  const size_t len = tokens.size();
  if (k == 0) return {};
  for (size_t n = std::min<size_t>(max_n, len > 0 ? len - 1 : 0); n >= min_n && n > 0; --n) {
    std::span<const int32_t> suffix = tokens.subspan(len - n, n);
    // Most recent earlier occurrence: start positions s < len - n, scanning backwards; the match
    // must leave at least one following token.
    for (size_t s = len - n; s-- > 0;) {
      if (!std::equal(suffix.begin(), suffix.end(), tokens.begin() + static_cast<ptrdiff_t>(s))) {
        continue;
      }
      const size_t from = s + n;
      const size_t count = std::min<size_t>(k, len - from);
      return {tokens.begin() + static_cast<ptrdiff_t>(from),
              tokens.begin() + static_cast<ptrdiff_t>(from + count)};
    }
  }
  return {};
}

}  // namespace plinth::spec_decode
