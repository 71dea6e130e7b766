// prefix_radix — the plugin instance: reads the config and the wired kv_cache's block size,
// keeps a RadixTree whose block references go through the kv_cache's ref_blocks / unref_blocks,
// and publishes hit and size metrics through the host API after every call.
// plinth::sdk::prefix_cache_vtable<PrefixRadixPlugin>() turns it into the C table (entry.cpp).
// Thread rules: one thread at a time (the ABI's default).
#pragma once

#include <plinth/prefix_cache.h>
#include <plinth/plugin.hpp>

#include <cstdint>
#include <span>
#include <string_view>

#include "prefix_radix_config.hpp"
#include "radix_tree.hpp"

namespace plinth::prefix_radix {

/// BlockRefs over a wired kv_cache's C table. A failing call becomes plinth::sdk::Error with the
/// kv_cache's status and message (the kv_cache changed nothing then).
class KvBlockRefs final : public BlockRefs {
 public:
  /// Throws std::invalid_argument naming the fix when `kv` is not wired or lacks the calls used.
  explicit KvBlockRefs(plinth_kv_cache_ref kv);
  void ref(std::span<const int32_t> blocks) override;
  void unref(std::span<const int32_t> blocks) override;
  /// The kv_cache's get_info (block_size, num_blocks). Throws sdk::Error when it fails.
  plinth_kv_info info() const;

 private:
  plinth_kv_cache_ref kv_;
};

class PrefixRadixPlugin {
 public:
  /// args.kv_cache must be wired (std::invalid_argument otherwise); args.config_json is parsed by
  /// parse_config (std::invalid_argument for a bad one).
  explicit PrefixRadixPlugin(const plinth_create_args& args);

  /// The longest cached prefix of `tokens` in the namespace (config salt, `salt`), locked until
  /// release(handle). `blocks` is owned by the plugin, valid until release(handle) or destroy.
  plinth_prefix_match match(std::span<const int32_t> tokens, std::string_view salt);
  /// Unlocks a match; unknown handle: no-op.
  void release(uint64_t handle);
  /// Caches the full blocks of tokens (held in blocks) in the namespace (config salt, `salt`); see
  /// RadixTree::insert. std::invalid_argument for too few or conflicting blocks.
  void insert(std::span<const int32_t> tokens, std::string_view salt,
              std::span<const int32_t> blocks);
  /// Evicts up to num_blocks unlocked blocks, LRU leaves first; returns how many.
  uint32_t evict(uint32_t num_blocks);
  /// Counters and sizes now (struct_size filled).
  plinth_prefix_stats stats() const;

  const RadixTree& tree() const { return tree_; }
  const PrefixRadixConfig& config() const { return config_; }

 private:
  PrefixRadixPlugin(const plinth_create_args& args, PrefixRadixConfig config);
  void publish_metrics();

  sdk::Host host_;
  PrefixRadixConfig config_;
  std::string model_;  // the model file (args.model->path): part of every key's namespace
  KvBlockRefs refs_;   // declared before tree_: the tree gives its references back first
  RadixTree tree_;
  TreeStats published_;  // the cumulative counters as last added to the host's metrics
  int64_t m_queries_ = -1, m_hits_ = -1, m_evicted_ = -1, m_cached_ = -1;
};

}  // namespace plinth::prefix_radix
