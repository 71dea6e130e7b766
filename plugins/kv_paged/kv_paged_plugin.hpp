// kv_paged — the plugin instance: reads the config and the wired backend's KV layout and memory,
// sizes the pool, forwards every kv_cache call to BlockTables and publishes pool metrics through
// the host API after each change. plinth::sdk::kv_cache_vtable<KvPagedPlugin>() turns it into the
// C table (entry.cpp); tests of other plugins build the same table to run against the real pool.
#pragma once

#include <plinth/kv_cache.h>
#include <plinth/plugin.hpp>

#include <cstdint>
#include <span>

#include "block_tables.hpp"
#include "kv_paged_config.hpp"

// The watermark extension lives in the SDK since ABI 1.3; a build against older headers
// (tests/plugins/abi_compat rebuilds this plugin against the frozen 1.0 ones) offers none, and a
// scheduler then keeps its own default free.
#if __has_include(<plinth/ext_kv_watermark.h>)
#include <plinth/ext_kv_watermark.h>
#define PLINTH_KV_PAGED_WATERMARK_EXT 1
#endif

namespace plinth::kv_paged {

class KvPagedPlugin {
 public:
  /// args->backend must be wired (vtable with get_kv_layout and get_memory_info). Throws
  /// std::invalid_argument for a bad config or a pool too small (see size_pool), sdk::Error
  /// with the backend's status when it fails to answer.
  explicit KvPagedPlugin(const plinth_create_args& args);

  plinth_kv_info info() const;
  plinth_kv_stats stats() const { return tables_.stats(); }
  uint32_t blocks_needed(plinth_seq_id seq, uint32_t num_tokens) const {
    return tables_.blocks_needed(seq, num_tokens);
  }
  uint32_t allocate(plinth_seq_id seq, uint32_t num_tokens, std::span<plinth_block_copy> copies);
  std::span<const int32_t> block_table(plinth_seq_id seq) const { return tables_.block_table(seq); }
  void free_seq(plinth_seq_id seq);
  void truncate(plinth_seq_id seq, uint32_t num_tokens);
  void fork(plinth_seq_id parent, plinth_seq_id child);
  void attach(plinth_seq_id seq, std::span<const int32_t> blocks, uint32_t num_tokens);
  void ref_blocks(std::span<const int32_t> blocks);
  void unref_blocks(std::span<const int32_t> blocks);
  /// Answers PLINTH_EXT_KV_WATERMARK (plinth/ext_kv_watermark.h: floor(watermark x num_blocks),
  /// valid while the instance lives); NULL for anything else.
  const void* extension(const char* name) const;

  const BlockTables& tables() const { return tables_; }

 private:
  KvPagedPlugin(const plinth_create_args& args, const KvPagedConfig& config, const PoolSize& size);
  void publish_metrics() const;

  sdk::Host host_;
  KvPagedConfig config_;
  PoolSize size_;
  BlockTables tables_;
#ifdef PLINTH_KV_PAGED_WATERMARK_EXT
  plinth_kv_watermark_ext watermark_ext_{};
#endif
  int64_t m_total_ = -1, m_free_ = -1, m_waste_ = -1;
};

}  // namespace plinth::kv_paged
