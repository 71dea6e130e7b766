/* plinth plugin ABI — extension "plinth.kv_watermark/1", offered by a kv_cache through
 * lifecycle.get_extension. It tells the scheduler how many KV blocks to keep free when it admits
 * new sequences, so that the sequences already running can still grow by a few decode steps
 * before anyone is preempted (vLLM's `watermark` on its block manager). kv_paged offers it (its
 * `watermark` option: floor(watermark x num_blocks)); scheduler_continuous reads it and, when the
 * kv_cache offers none, keeps floor(0.01 x num_blocks) free. Any kv_cache or scheduler may
 * implement or read it; neither needs the other's headers. */
#ifndef PLINTH_EXT_KV_WATERMARK_H
#define PLINTH_EXT_KV_WATERMARK_H

#include "plinth/kv_cache.h"

#ifdef __cplusplus
extern "C" {
#endif

#define PLINTH_EXT_KV_WATERMARK "plinth.kv_watermark/1"

/* What get_extension(inst, PLINTH_EXT_KV_WATERMARK) returns. Owned by the kv_cache instance, valid
 * and constant until the instance is destroyed; the reader never writes to it. Grows only at the
 * end: a reader checks struct_size (PLINTH_HAS_FIELD) before reading a field. */
typedef struct plinth_kv_watermark_ext {
  uint32_t struct_size;      /* sizeof(plinth_kv_watermark_ext) as the kv_cache compiled it */
  uint32_t watermark_blocks; /* blocks to leave free at admission, in [0, num_blocks) of the
                                instance's plinth_kv_info; a scheduler waives it while nothing
                                runs, so that one sequence can always be admitted */
} plinth_kv_watermark_ext;

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* PLINTH_EXT_KV_WATERMARK_H */
