/* plinth plugin ABI — prefix_cache: reuse of the KV blocks of earlier prompts that share a prefix
 * (SGLang's RadixAttention, Zheng et al., 2024, §3: match_prefix / insert / evict with lock refs).
 * Only full blocks are cached. The cache holds one kv_cache reference on each cached block. */
#ifndef PLINTH_PREFIX_CACHE_H
#define PLINTH_PREFIX_CACHE_H

#include "plinth/kv_cache.h"

#ifdef __cplusplus
extern "C" {
#endif

/* A match: the longest cached prefix of the queried tokens, in whole blocks. */
typedef struct plinth_prefix_match {
  uint32_t struct_size;
  uint32_t num_tokens; /* matched tokens, a multiple of the block size */
  uint32_t num_blocks;
  const int32_t* blocks; /* [num_blocks], owned by the plugin, valid until release(handle) */
  uint64_t handle;       /* pass to release; 0 when nothing matched (release not needed) */
} plinth_prefix_match;

typedef struct plinth_prefix_stats {
  uint32_t struct_size;
  uint64_t num_queried_tokens; /* total over all match calls */
  uint64_t num_hit_tokens;     /* of those, matched */
  uint32_t num_cached_blocks;
  uint32_t num_evictable_blocks; /* cached blocks no match holds locked */
  /* ---- ABI 1.1 ---- */
  uint64_t num_evicted_blocks;  /* total evicted since create */
  uint64_t num_inserted_blocks; /* total newly cached since create */
} plinth_prefix_stats;

/* A lookup key (ABI 1.1): token ids in a namespace. Two keys share a cached block only when their
 * salts are byte-equal and their token ids up to the end of that block are equal. */
typedef struct plinth_prefix_key {
  uint32_t struct_size;
  uint32_t num_tokens;
  const int32_t* tokens; /* [num_tokens] */
  const char* salt;      /* [salt_len] bytes, any values; NULL allowed when salt_len == 0 */
  uint32_t salt_len;
} plinth_prefix_key;

typedef struct plinth_prefix_cache_vtable {
  uint32_t struct_size;
  plinth_lifecycle lifecycle; /* create receives args->kv_cache (required) */

  /* Required. Finds the longest cached prefix of tokens[0..num_tokens) and locks it against
   * eviction until release(out->handle) (inc_lock_ref). */
  int32_t (*match)(plinth_instance* inst, const int32_t* tokens, uint32_t num_tokens,
                   plinth_prefix_match* out, plinth_error* err);
  /* Required. Unlocks a match (dec_lock_ref). Unknown handle: no-op. */
  void (*release)(plinth_instance* inst, uint64_t handle);
  /* Required. Caches the full blocks of a sequence: tokens[0..num_tokens) held in
   * blocks[0..num_blocks) (num_tokens / block_size of them are full). Called before the sequence
   * frees its blocks; blocks newly cached gain one reference. */
  int32_t (*insert)(plinth_instance* inst, const int32_t* tokens, uint32_t num_tokens,
                    const int32_t* blocks, uint32_t num_blocks, plinth_error* err);
  /* Required. Evicts up to num_blocks unlocked blocks, least recently used leaves first, dropping
   * the cache's references; *num_evicted receives how many. */
  int32_t (*evict)(plinth_instance* inst, uint32_t num_blocks, uint32_t* num_evicted,
                   plinth_error* err);
  /* Required. */
  int32_t (*get_stats)(plinth_instance* inst, plinth_prefix_stats* out, plinth_error* err);

  /* ---- ABI 1.1 (optional: NULL in a 1.0 plugin; a caller then uses match / insert, which act
   * as the empty salt, and must not cache salted sequences at all) ---- */

  /* As match, within key->salt's namespace. */
  int32_t (*match_key)(plinth_instance* inst, const plinth_prefix_key* key,
                       plinth_prefix_match* out, plinth_error* err);
  /* As insert, within key->salt's namespace: key->tokens are held in blocks[0..num_blocks). */
  int32_t (*insert_key)(plinth_instance* inst, const plinth_prefix_key* key, const int32_t* blocks,
                        uint32_t num_blocks, plinth_error* err);
} plinth_prefix_cache_vtable;

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* PLINTH_PREFIX_CACHE_H */
