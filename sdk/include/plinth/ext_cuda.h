/* plinth plugin ABI — extension "plinth.cuda_stream/1", offered by CUDA backends through
 * lifecycle.get_extension. It exposes what CUDA Graph capture needs without widening the core
 * backend table: the stream the backend enqueues on, and a forward pass over fixed (static) device
 * buffers that only enqueues work (no host synchronisation, no allocation), so it can be
 * captured. */
#ifndef PLINTH_EXT_CUDA_H
#define PLINTH_EXT_CUDA_H

#include "plinth/backend.h"

#ifdef __cplusplus
extern "C" {
#endif

#define PLINTH_EXT_CUDA_STREAM "plinth.cuda_stream/1"

typedef struct plinth_cuda_stream_ext {
  uint32_t struct_size;
  /* The backend's cudaStream_t (as void*); valid until the instance is destroyed. */
  void* (*get_stream)(plinth_instance* inst);
  /* Allocates static device buffers for decode batches of up to max_seqs sequences (one token
   * each) and max_blocks_per_seq blocks per block table. */
  int32_t (*prepare_static)(plinth_instance* inst, uint32_t max_seqs, uint32_t max_blocks_per_seq,
                            plinth_error* err);
  /* Copies `batch` (decode-only, padded by the caller to num_seqs) into the static buffers with
   * asynchronous copies on the stream. */
  int32_t (*load_static)(plinth_instance* inst, const plinth_batch* batch, plinth_error* err);
  /* Enqueues the forward pass for num_seqs decode tokens over the static buffers; capturable. */
  int32_t (*forward_static)(plinth_instance* inst, uint32_t num_seqs, plinth_error* err);
  /* Synchronises the stream and exposes the logits of the first num_logits sequences. */
  int32_t (*read_logits)(plinth_instance* inst, uint32_t num_logits, plinth_forward_output* out,
                         plinth_error* err);
} plinth_cuda_stream_ext;

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* PLINTH_EXT_CUDA_H */
