// scheduler_continuous — the wired prefix cache (args.prefix_cache) as a small C++ object, with
// the host's sequence lookup (plinth_host_api.get_seq, ABI 1.1) that supplies the token ids the
// scheduler itself never stores. Disabled (every call a no-op) when no prefix cache is wired or
// the host cannot describe sequences.
//
// Keys: a sequence's tokens within its salt (model identity + request cache_salt, from get_seq).
// A 1.0 prefix cache (no match_key / insert_key) serves unsalted sequences only; a sequence
// flagged PLINTH_SEQ_NO_PREFIX_CACHE is never matched nor inserted.
//
// Errors: a failing prefix-cache call throws plinth::sdk::Error naming the call.
#pragma once

#include <plinth/host_api.h>
#include <plinth/plugin.h>
#include <plinth/prefix_cache.h>

#include <cstdint>
#include <span>
#include <vector>

namespace plinth::scheduler_continuous {

/// A locked match: blocks[0..num_tokens / block_size) hold the sequence's first num_tokens tokens.
struct PrefixMatch {
  uint32_t num_tokens = 0;
  std::vector<int32_t> blocks;
  uint64_t handle = 0;  // 0 = nothing locked
};

class PrefixClient {
 public:
  PrefixClient(plinth_prefix_cache_ref ref, const plinth_host_api* host);

  bool enabled() const { return ref_.vtable != nullptr; }
  /// Longest cached prefix of the first `max_tokens` tokens of `seq`, locked until release().
  /// Nothing (num_tokens 0) when disabled, the sequence opts out, or its salt cannot be served.
  PrefixMatch match(plinth_seq_id seq, uint32_t max_tokens);
  /// Unlocks a match (handle 0: no-op).
  void release(uint64_t handle);
  /// Caches the first num_tokens tokens of `seq` (a multiple of the block size), held in
  /// blocks[0..num_tokens / block_size).
  void insert(plinth_seq_id seq, uint32_t num_tokens, std::span<const int32_t> blocks);
  /// Evicts up to num_blocks unlocked blocks; returns how many.
  uint32_t evict(uint32_t num_blocks);
  /// Cached blocks no match holds locked (0 when disabled).
  uint32_t evictable_blocks() const;

 private:
  struct Key {
    bool usable = false;
    plinth_prefix_key key{};
  };
  Key key_of(plinth_seq_id seq, uint32_t max_tokens) const;

  plinth_prefix_cache_ref ref_;
  const plinth_host_api* host_;
  bool has_keys_ = false;  // the prefix cache offers match_key / insert_key (ABI 1.1)
};

}  // namespace plinth::scheduler_continuous
