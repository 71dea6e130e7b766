/* plinth plugin ABI — graph_runner: captures decode steps as CUDA Graphs per batch-size bucket
 * (capture size) and replays them, padding a batch up to the next captured size. It reaches the
 * backend's stream and static buffers through the "plinth.cuda_stream/1" extension. */
#ifndef PLINTH_GRAPH_RUNNER_H
#define PLINTH_GRAPH_RUNNER_H

#include "plinth/backend.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct plinth_graph_runner_vtable {
  uint32_t struct_size;
  plinth_lifecycle lifecycle; /* create receives args->backend, which must offer
                                 PLINTH_EXT_CUDA_STREAM; otherwise UNSUPPORTED */

  /* Required. Captures one graph per capture size (decode batches of that many sequences), after
   * the backend's KV cache is allocated. */
  int32_t (*capture)(plinth_instance* inst, plinth_error* err);
  /* Required. Non-zero when `batch` can be replayed (decode-only, at most the largest capture
   * size). */
  int32_t (*can_run)(plinth_instance* inst, const plinth_batch* batch);
  /* Required. Replays the graph for `batch`; output as plinth_backend_vtable.forward. */
  int32_t (*run)(plinth_instance* inst, const plinth_batch* batch, plinth_forward_output* out,
                 plinth_error* err);
} plinth_graph_runner_vtable;

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* PLINTH_GRAPH_RUNNER_H */
