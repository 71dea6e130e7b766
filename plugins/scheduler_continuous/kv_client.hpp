// scheduler_continuous — the wired kv_cache as a small C++ object: the scheduler allocates,
// frees and truncates KV slots through the plinth_kv_cache_vtable the host hands it (it never
// links the kv_cache plugin). Errors other than NO_CAPACITY become plinth::sdk::Error.
#pragma once

#include <plinth/kv_cache.h>
#include <plinth/plugin.h>

#include <cstdint>
#include <span>
#include <vector>

namespace plinth::scheduler_continuous {

class KvClient {
 public:
  /// Throws std::invalid_argument when `ref` is not wired.
  explicit KvClient(plinth_kv_cache_ref ref);

  plinth_kv_info info() const;
  plinth_kv_stats stats() const;
  uint32_t blocks_needed(plinth_seq_id seq, uint32_t num_tokens) const;
  /// Room for `num_tokens` tokens of `seq` in total. Returns false (nothing changed) on
  /// NO_CAPACITY; appends any copy-on-write to `copies`.
  bool allocate(plinth_seq_id seq, uint32_t num_tokens, std::vector<plinth_block_copy>& copies);
  void free_seq(plinth_seq_id seq);
  void truncate(plinth_seq_id seq, uint32_t num_tokens);
  /// `child` (new) shares every block of `parent` (n > 1 choices).
  void fork(plinth_seq_id parent, plinth_seq_id child);
  /// `seq` (new) starts with cached `blocks` holding its first num_tokens tokens.
  void attach(plinth_seq_id seq, std::span<const int32_t> blocks, uint32_t num_tokens);
  /// The block table of `seq` (a copy).
  std::vector<int32_t> block_table(plinth_seq_id seq) const;
  /// The kv_cache's watermark when it offers plinth.kv_watermark/1 (plinth/ext_kv_watermark.h),
  /// else floor(default_fraction * num_blocks).
  uint32_t watermark_blocks(double default_fraction) const;

 private:
  plinth_kv_cache_ref ref_;
};

}  // namespace plinth::scheduler_continuous
