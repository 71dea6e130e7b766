// The deterministic "model" of the fake backend (fake_kv_backend.cpp) and of the engine invariant
// test's reference: the token after position p is a hash of the tokens at positions p-3..p (fewer
// at the start) and of p. The fake backend reads those tokens back from the KV slots the block
// table names; the test computes them from the plain token list. Any error in block tables, slot
// mapping, copy-on-write, preemption/recompute or batching shows up as a different token.
#pragma once

#include <cstdint>
#include <span>

namespace plinth_test {

inline constexpr uint32_t kHistoryWindow = 4;

/// Next token after `window` (the last <= kHistoryWindow tokens, oldest first), which ends at
/// position `pos`; in [0, vocab).
inline int32_t next_token(std::span<const int32_t> window, uint32_t pos, uint32_t vocab) {
  uint64_t h = 1469598103934665603ull ^ pos;  // FNV-1a over (pos, tokens)
  for (int32_t t : window) {
    h ^= static_cast<uint64_t>(static_cast<uint32_t>(t));
    h *= 1099511628211ull;
    h ^= h >> 29;
  }
  return static_cast<int32_t>(h % vocab);
}

}  // namespace plinth_test
