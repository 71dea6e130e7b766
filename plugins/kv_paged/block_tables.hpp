// kv_paged — the block tables: the policy half of a paged KV cache (PagedAttention, Kwon et
// al., SOSP 2023, §4.2–4.4; vLLM v1's KVCacheManager over its BlockPool). Per sequence it keeps a
// block table (physical block ids, logical order) and the number of token slots it holds; it
// shares blocks between sequences by reference counts (fork, prefix-cache attach), makes a private
// copy of a shared, partially filled last block before it is written (copy-on-write, §4.4), and
// counts external references (a prefix cache keeping blocks alive).
//
// Token accounting: a sequence holding `num_tokens` slots has exactly ceil(num_tokens /
// block_size) blocks. Slot `t` of the sequence lives in block table[t / block_size] at offset
// t % block_size.
//
// Errors: std::invalid_argument (bad input; state unchanged), plinth::sdk::Error with
// PLINTH_ERR_NO_CAPACITY (not enough free blocks; state unchanged) or PLINTH_ERR_NOT_FOUND
// (unknown sequence). Thread rules: one thread at a time.
#pragma once

#include <plinth/kv_cache.h>

#include <cstdint>
#include <span>
#include <unordered_map>
#include <vector>

#include "block_pool.hpp"

namespace plinth::kv_paged {

class BlockTables {
 public:
  /// `block_size` tokens per block (a power of two, 1..256), `num_blocks` blocks (>= 1).
  /// Throws std::invalid_argument otherwise.
  BlockTables(uint32_t block_size, uint32_t num_blocks);

  uint32_t block_size() const { return block_size_; }
  uint32_t num_blocks() const { return pool_.num_blocks(); }
  uint32_t num_free_blocks() const { return pool_.num_free(); }
  uint32_t num_used_blocks() const { return pool_.num_used(); }
  /// Blocks needed to hold `num_tokens` tokens: ceil(num_tokens / block_size).
  uint64_t blocks_for(uint64_t num_tokens) const {
    return (num_tokens + block_size_ - 1) / block_size_;
  }

  /// Usage now (struct_size filled). Shared blocks count once.
  plinth_kv_stats stats() const;

  /// Free blocks `seq` would take to hold `num_tokens` tokens in total, counting a copy-on-write
  /// of its shared, partially filled last block. 0 when it holds that many already. Unknown seq =
  /// a new, empty one.
  uint32_t blocks_needed(plinth_seq_id seq, uint32_t num_tokens) const;

  /// Gives `seq` (created on first use) room for `num_tokens` tokens in total; never shrinks
  /// (see truncate). All or nothing. Returns the number of block copies written to `copies`
  /// (0 or 1): when the shared last block must be written, it is replaced by a private copy
  /// {src, dst} the backend must apply before the next forward. Errors: NO_CAPACITY (Error),
  /// std::invalid_argument when a copy is needed and `copies` is empty.
  uint32_t allocate(plinth_seq_id seq, uint32_t num_tokens, std::span<plinth_block_copy> copies);

  /// The block table of `seq`, valid until the next call that changes it. NOT_FOUND (Error).
  std::span<const int32_t> block_table(plinth_seq_id seq) const;

  /// Slots `seq` holds. NOT_FOUND (Error) when unknown.
  uint32_t num_tokens(plinth_seq_id seq) const;

  bool contains(plinth_seq_id seq) const { return seqs_.count(seq) != 0; }
  size_t num_seqs() const { return seqs_.size(); }

  /// Drops `seq` and one reference to each of its blocks. Unknown seq: no-op (idempotent).
  void free_seq(plinth_seq_id seq);

  /// Shrinks `seq` to `num_tokens` slots, releasing the blocks past them. NOT_FOUND (Error) for an
  /// unknown seq, std::invalid_argument when num_tokens exceeds what it holds.
  void truncate(plinth_seq_id seq, uint32_t num_tokens);

  /// `child` (new) shares every block of `parent`. NOT_FOUND (Error) for an unknown parent,
  /// std::invalid_argument when child exists or equals parent.
  void fork(plinth_seq_id parent, plinth_seq_id child);

  /// `seq` (new) starts with `blocks` (used blocks, e.g. a prefix-cache hit) holding its first
  /// `num_tokens` tokens; blocks.size() must be ceil(num_tokens / block_size), no duplicates.
  /// std::invalid_argument otherwise (state unchanged).
  void attach(plinth_seq_id seq, std::span<const int32_t> blocks, uint32_t num_tokens);

  /// Adds one external reference to each (used) block. std::invalid_argument for a free or
  /// out-of-range block (state unchanged).
  void ref_blocks(std::span<const int32_t> blocks);

  /// Drops one external reference from each block; blocks reaching 0 return to the pool.
  /// std::invalid_argument (state unchanged) when a block has fewer external references than
  /// asked for — this covers a double free and an unref of a block only tables hold.
  void unref_blocks(std::span<const int32_t> blocks);

  /// Reference count of a block (tables + external). For tests and the prefix cache.
  uint32_t ref_count(int32_t block) const { return pool_.ref_count(block); }
  /// External references (ref_blocks minus unref_blocks) of a block.
  uint32_t external_refs(int32_t block) const;

  /// Recomputes every invariant from scratch and throws std::logic_error naming the first broken
  /// one: ref count == table references + external references for every block; free + used ==
  /// total; a free block has no reference and sits once on the free list; each table holds
  /// exactly ceil(num_tokens / block_size) distinct blocks; the slot counters match. O(blocks +
  /// table entries); for tests.
  void check_invariants() const;

 private:
  struct Sequence {
    std::vector<int32_t> blocks;  // block table, logical order
    uint32_t num_tokens = 0;      // slots held
  };

  uint32_t tokens_in_block(uint32_t num_tokens, size_t index) const;
  // check_invariants()'s parts: the tables' references per block and the most tokens any table
  // keeps in it; the per-block counters against them (returning the totals); the free list against
  // the ref counts. Each throws std::logic_error naming the broken invariant.
  void count_table_refs(std::vector<uint32_t>& table_refs, std::vector<uint32_t>& max_fill) const;
  struct Totals {
    uint64_t used = 0, in_tables = 0, used_slots = 0;  // blocks referenced, in tables; slots used
  };
  Totals check_block_counters(const std::vector<uint32_t>& table_refs,
                              const std::vector<uint32_t>& max_fill) const;
  void check_free_list() const;
  void add_table_ref(int32_t block, uint32_t tokens);
  void drop_table_ref(int32_t block);  // also drops the pool reference
  void set_fill(int32_t block, uint32_t tokens);
  void release_if_freed(int32_t block, bool freed);

  uint32_t block_size_;
  BlockPool pool_;
  std::unordered_map<plinth_seq_id, Sequence> seqs_;
  std::vector<uint32_t> table_refs_;     // [num_blocks] references held by block tables
  std::vector<uint32_t> external_refs_;  // [num_blocks] ref_blocks - unref_blocks
  std::vector<uint32_t> fill_;           // [num_blocks] slots of the block holding a token
  uint64_t blocks_in_tables_ = 0;        // blocks with table_refs > 0
  uint64_t used_slots_ = 0;              // sum of fill_ over those blocks
};

}  // namespace plinth::kv_paged
