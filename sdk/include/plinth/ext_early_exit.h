/* plinth plugin ABI — extension "plinth.early_exit/1", offered by a backend through
 * lifecycle.get_extension. It runs the model truncated after its first `exit_layer` transformer
 * layers, then the final norm and the LM head: the draft model of self-speculative decoding
 * (LayerSkip, Elhoushi et al., ACL 2024; Draft & Verify, Zhang et al., ACL 2024), with no second
 * model in memory. */
#ifndef PLINTH_EXT_EARLY_EXIT_H
#define PLINTH_EXT_EARLY_EXIT_H

#include "plinth/backend.h"

#ifdef __cplusplus
extern "C" {
#endif

#define PLINTH_EXT_EARLY_EXIT "plinth.early_exit/1"

typedef struct plinth_early_exit_ext {
  uint32_t struct_size;
  /* The number of transformer layers of the model the instance runs; exit_layer must lie in
   * [1, num_layers). */
  uint32_t (*num_layers)(plinth_instance* inst);
  /* Same contract as backend.forward, with the model cut after layer exit_layer - 1: writes K/V
   * of layers [0, exit_layer) for the new tokens into their slots (deeper layers' slots are left
   * as they were), attends over each sequence's blocks in those layers, and returns
   * [num_logits, vocab] logits of final_norm(hidden after layer exit_layer - 1) · LM head for
   * batch->logits_indices. The logits stay valid until the next forward or forward_early_exit.
   * Errors: INVALID_ARGUMENT for exit_layer outside [1, num_layers) and everything forward
   * refuses. */
  int32_t (*forward_early_exit)(plinth_instance* inst, const plinth_batch* batch,
                                uint32_t exit_layer, plinth_forward_output* out, plinth_error* err);
} plinth_early_exit_ext;

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* PLINTH_EXT_EARLY_EXIT_H */
