// kv_paged — the block pool: the mechanism half of a paged KV cache (PagedAttention, Kwon et al.,
// SOSP 2023, §4.2; vLLM v1's BlockPool). It owns the ids 0..num_blocks-1 of the physical KV blocks,
// a free list and a reference count per block. It knows nothing about sequences; BlockTables
// (the policy) builds block tables on top of it.
//
// Free list: LIFO (a stack). The block freed last is handed out next, so the KV memory a step
// touches stays hot in CPU caches / TLBs, and the order is deterministic, which keeps tests and
// batch-invariance checks reproducible. Prefix reuse does not need FIFO here: a block the prefix
// cache keeps holds a reference and never sits on the free list.
//
// Thread rules: none; one thread at a time (the engine thread).
#pragma once

#include <cstdint>
#include <span>
#include <vector>

namespace plinth::kv_paged {

class BlockPool {
 public:
  /// A pool of `num_blocks` free blocks (ids 0..num_blocks-1). Throws std::invalid_argument when
  /// num_blocks is 0 or above INT32_MAX.
  explicit BlockPool(uint32_t num_blocks);

  uint32_t num_blocks() const { return static_cast<uint32_t>(ref_counts_.size()); }
  uint32_t num_free() const { return static_cast<uint32_t>(free_list_.size()); }
  uint32_t num_used() const { return num_blocks() - num_free(); }

  /// Takes `n` free blocks, each with reference count 1, appending them to `out`. All or nothing:
  /// returns false (and changes nothing) when fewer than `n` are free.
  bool allocate(uint32_t n, std::vector<int32_t>& out);

  /// Adds one reference to a used block. Throws std::invalid_argument for an id out of range or
  /// a free block (a reference to a free block would be a dangling one).
  void ref(int32_t block);

  /// Drops one reference; a block reaching 0 returns to the free list. Returns true when it did.
  /// Throws std::invalid_argument (nothing changed) for an id out of range or a free block
  /// (a double free).
  bool unref(int32_t block);

  /// Checks that every id is in range and used, and that no block would drop below zero if each
  /// were unreferenced once (duplicates counted). Throws std::invalid_argument naming the first
  /// offender. Lets span operations be all-or-nothing.
  void check_unref(std::span<const int32_t> blocks) const;

  /// Checks that every id is in range and used (ref count > 0). Throws std::invalid_argument.
  void check_used(std::span<const int32_t> blocks) const;

  /// Reference count of `block` (0 = free). Throws std::invalid_argument when out of range.
  uint32_t ref_count(int32_t block) const;

  bool is_free(int32_t block) const { return ref_count(block) == 0; }

  /// The free list, top of the stack last. For invariant checks.
  std::span<const int32_t> free_list() const { return free_list_; }

 private:
  void check_range(int32_t block) const;

  std::vector<uint32_t> ref_counts_;  // [num_blocks]
  std::vector<int32_t> free_list_;    // stack of free block ids
};

}  // namespace plinth::kv_paged
