/* plinth plugin ABI — backend: runs the model over a flat variable-length batch
 * (docs/architecture.md, 'One engine step') and owns the KV cache memory, which it addresses
 * through block tables (PagedAttention, Kwon et al., SOSP 2023, §4). */
#ifndef PLINTH_BACKEND_H
#define PLINTH_BACKEND_H

#include "plinth/plugin.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Shape of the KV cache a backend keeps for the model it runs. */
typedef struct plinth_kv_layout {
  uint32_t struct_size;
  uint64_t bytes_per_token; /* K and V of one token over all layers, bytes */
  uint32_t n_layers;
  uint32_t n_kv_heads;
  uint32_t head_dim;
  int32_t dtype; /* a plinth_dtype (F32, F16, BF16) */
} plinth_kv_layout;

typedef enum plinth_device_kind {
  PLINTH_DEVICE_CPU = 0,
  PLINTH_DEVICE_CUDA = 1
} plinth_device_kind;

/* Memory of the device the backend computes on, bytes, after the weights are loaded. */
typedef struct plinth_memory_info {
  uint32_t struct_size;
  int32_t device_kind; /* a plinth_device_kind */
  uint64_t free_bytes; /* available for the KV cache now */
  uint64_t total_bytes;
} plinth_memory_info;

/* One KV block copy (copy-on-write, prefix sharing): all layers' K and V of block `src` into
 * `dst`. */
typedef struct plinth_block_copy {
  int32_t src;
  int32_t dst;
} plinth_block_copy;

/* A flat batch mixing prefill chunks and decode tokens, no padding. Sequence i owns tokens
 * [query_start[i], query_start[i+1]); its new tokens sit at positions seq_lens[i] - n_i ..
 * seq_lens[i]-1 where n_i = query_start[i+1] - query_start[i]. All arrays are host memory owned by
 * the caller and valid for the call. */
typedef struct plinth_batch {
  uint32_t struct_size;
  uint32_t num_tokens; /* total new tokens */
  uint32_t num_seqs;
  const int32_t* token_ids;    /* [num_tokens] */
  const int32_t* positions;    /* [num_tokens] position of each token in its sequence */
  const int32_t* query_start;  /* [num_seqs + 1] prefix sums of new tokens per sequence */
  const int32_t* seq_lens;     /* [num_seqs] tokens in context after this step (cached + new) */
  const int32_t* block_tables; /* [num_seqs, max_blocks_per_seq] row-major physical block ids;
                                  entries past a sequence's blocks are -1 */
  uint32_t max_blocks_per_seq;
  uint32_t block_size; /* tokens per block */
  /* [num_tokens] KV slot of each new token: block * block_size + offset */
  const int32_t* slot_mapping;
  uint32_t num_logits;
  const int32_t* logits_indices; /* [num_logits] indices into the new tokens whose logits are
                                    wanted, ascending */
  /* ABI 1.3 (read with PLINTH_HAS_FIELD). Non-zero: the host needs only the argmax id of each
   * logits row (every row is sampled greedily and nothing asks for logprobs), so a backend that
   * computes plinth_forward_output.argmax_ids on its device may return logits = NULL and copy
   * [num_logits] ids instead of [num_logits, vocab_size] floats. Zero, or absent (an older host):
   * logits are required. */
  uint32_t argmax_only;
} plinth_batch;

/* Result of forward. An output that breaks these rules (num_logits other than the batch's, logits
 * NULL where they are required, rows of another vocab_size than the model's, argmax ids outside
 * [-1, vocab_size)) cannot be pinned on one sequence: the host fails every sequence of that batch
 * with an error naming the backend (or graph runner) and serves on. */
typedef struct plinth_forward_output {
  uint32_t struct_size;
  uint32_t num_logits; /* == batch->num_logits */
  uint32_t vocab_size;
  const float* logits;       /* [num_logits, vocab_size] float32 host memory owned by the backend,
                                valid until the next forward, allocate_kv or destroy */
  const void* logits_device; /* optional device copy (same shape), NULL on the CPU */
  /* ABI 1.3 (write only when out->struct_size covers it). [num_logits] host memory owned by the
   * backend, same lifetime as logits: the argmax token id of each logits row, the lowest id on
   * ties (the host's greedy rule, so ids equal the host's argmax over `logits`); -1 for a row
   * holding NaN or +inf (the host fails that request as its sampler would). NULL when the backend
   * does not compute them; required with logits = NULL. */
  const int32_t* argmax_ids;
} plinth_forward_output;

typedef struct plinth_backend_vtable {
  uint32_t struct_size;
  plinth_lifecycle lifecycle; /* create receives args->model (required) */

  /* Required. The KV layout for the model this instance runs. */
  int32_t (*get_kv_layout)(plinth_instance* inst, plinth_kv_layout* out, plinth_error* err);
  /* Required. Memory available for the KV cache on the backend's device. */
  int32_t (*get_memory_info)(plinth_instance* inst, plinth_memory_info* out, plinth_error* err);
  /* Required. Allocates the KV cache: num_blocks blocks of block_size tokens (num_blocks *
   * block_size * bytes_per_token bytes), replacing any earlier allocation. Called once by the
   * host after the kv_cache plugin sized its pool. Errors: OUT_OF_MEMORY. */
  int32_t (*allocate_kv)(plinth_instance* inst, uint32_t num_blocks, uint32_t block_size,
                         plinth_error* err);
  /* Required. Runs the model over `batch`: writes K/V of the new tokens into their slots, attends
   * causally over each sequence's blocks, and returns logits for batch->logits_indices. Errors:
   * INVALID_ARGUMENT (ids out of range, slots outside the cache, inconsistent arrays). */
  int32_t (*forward)(plinth_instance* inst, const plinth_batch* batch, plinth_forward_output* out,
                     plinth_error* err);
  /* Required. Copies whole KV blocks (copy-on-write); copies are applied in order. */
  int32_t (*copy_blocks)(plinth_instance* inst, const plinth_block_copy* copies,
                         uint32_t num_copies, plinth_error* err);
} plinth_backend_vtable;

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* PLINTH_BACKEND_H */
