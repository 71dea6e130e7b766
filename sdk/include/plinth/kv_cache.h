/* plinth plugin ABI — kv_cache: the block pool and per-sequence block tables of a paged KV cache
 * (PagedAttention, Kwon et al., SOSP 2023, §4.2–4.4). It is bookkeeping only: the memory itself
 * belongs to the backend, which the host asks to allocate num_blocks blocks after create. */
#ifndef PLINTH_KV_CACHE_H
#define PLINTH_KV_CACHE_H

#include "plinth/backend.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Pool geometry, fixed after create. */
typedef struct plinth_kv_info {
  uint32_t struct_size;
  uint32_t block_size;      /* tokens per block */
  uint32_t num_blocks;      /* blocks in the pool */
  uint64_t bytes_per_block; /* backend bytes per block (block_size * bytes_per_token) */
} plinth_kv_info;

/* Pool usage now. */
typedef struct plinth_kv_stats {
  uint32_t struct_size;
  uint32_t num_blocks;
  uint32_t num_used_blocks; /* blocks with a reference count > 0 */
  uint32_t num_free_blocks;
  uint64_t num_allocated_slots; /* slots of blocks held by sequences (shared blocks once) */
  uint64_t num_used_slots;      /* of those, slots holding a token */
} plinth_kv_stats;

typedef struct plinth_kv_cache_vtable {
  uint32_t struct_size;
  plinth_lifecycle lifecycle; /* create receives args->backend for its layout and memory info */

  /* Required. */
  int32_t (*get_info)(plinth_instance* inst, plinth_kv_info* out, plinth_error* err);
  /* Required. */
  int32_t (*get_stats)(plinth_instance* inst, plinth_kv_stats* out, plinth_error* err);
  /* Required. Free blocks the pool would need to give `seq` room for `num_tokens` tokens in total
   * (0 when it has room; counts copy-on-write of a shared last block). Unknown seq = new, empty. */
  uint32_t (*blocks_needed)(plinth_instance* inst, plinth_seq_id seq, uint32_t num_tokens);
  /* Required. Gives `seq` (created on first use) room for `num_tokens` tokens in total. All or
   * nothing: on NO_CAPACITY nothing changed. When a shared block must be written, a private copy
   * is made: the (src, dst) pairs are written to copies[0..*num_copies) (capacity
   * copies_capacity; at most 1 per call) and the host must have the backend copy them before the
   * next forward. */
  int32_t (*allocate)(plinth_instance* inst, plinth_seq_id seq, uint32_t num_tokens,
                      plinth_block_copy* copies, uint32_t copies_capacity, uint32_t* num_copies,
                      plinth_error* err);
  /* Required. The block table of `seq`: *blocks points to *num_blocks physical block ids, owned by
   * the plugin and valid until the next call that changes this sequence. NOT_FOUND for an unknown
   * seq. Every id is in [0, num_blocks), and the table holds room for the tokens allocated; the
   * host fails a scheduled sequence whose table breaks this (or is NOT_FOUND), naming the kv_cache,
   * and frees it through the scheduler. */
  int32_t (*get_block_table)(plinth_instance* inst, plinth_seq_id seq, const int32_t** blocks,
                             uint32_t* num_blocks, plinth_error* err);
  /* Required. Drops `seq` and one reference to each of its blocks; a block whose count reaches 0
   * returns to the pool. Unknown seq: no-op. */
  void (*free_seq)(plinth_instance* inst, plinth_seq_id seq);
  /* Required. Shrinks `seq` to its first num_tokens tokens (rolls back rejected draft tokens),
   * releasing blocks no longer needed. INVALID_ARGUMENT when num_tokens exceeds its length. */
  int32_t (*truncate)(plinth_instance* inst, plinth_seq_id seq, uint32_t num_tokens,
                      plinth_error* err);
  /* Required. `child` (new) shares every block of `parent` (n > 1 completions, beam forks): each
   * gains a reference; later writes copy on write. */
  int32_t (*fork)(plinth_instance* inst, plinth_seq_id parent, plinth_seq_id child,
                  plinth_error* err);
  /* Required. `seq` (new) starts with `num_blocks` existing blocks holding its first num_tokens
   * tokens (a prefix-cache hit); each block gains a reference. */
  int32_t (*attach)(plinth_instance* inst, plinth_seq_id seq, const int32_t* blocks,
                    uint32_t num_blocks, uint32_t num_tokens, plinth_error* err);
  /* Required. Adds one reference to each block (a cache keeping blocks alive). */
  int32_t (*ref_blocks)(plinth_instance* inst, const int32_t* blocks, uint32_t num_blocks,
                        plinth_error* err);
  /* Required. Drops one reference from each block; blocks reaching 0 return to the pool.
   * INVALID_ARGUMENT (nothing changed) when a block is free already. */
  int32_t (*unref_blocks)(plinth_instance* inst, const int32_t* blocks, uint32_t num_blocks,
                          plinth_error* err);
} plinth_kv_cache_vtable;

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* PLINTH_KV_CACHE_H */
