/* The record test_spec_probe keeps of its create arguments, returned by
 * get_extension(PLINTH_TEST_EXT_SPEC_PROBE). Test-only; not part of the plinth ABI. */
#ifndef PLINTH_TEST_SPEC_PROBE_H
#define PLINTH_TEST_SPEC_PROBE_H

#include "plinth/backend.h"
#include "plinth/plugin.h"

#define PLINTH_TEST_EXT_SPEC_PROBE "plinth_test.spec_probe/1"

typedef struct plinth_test_spec_probe {
  uint32_t struct_size;
  uint32_t args_struct_size; /* create_args.struct_size as the host passed it */
  const plinth_model_desc* model;
  plinth_backend_ref backend;
  plinth_kv_cache_ref kv_cache;
  plinth_backend_ref draft_backend;
  const plinth_model_desc* draft_model;
  /* draft_backend.get_kv_layout called at create (all 0 without a draft backend; status in
   * draft_layout_status, PLINTH_OK when the call succeeded) */
  plinth_kv_layout draft_layout;
  int32_t draft_layout_status;
} plinth_test_spec_probe;

#endif /* PLINTH_TEST_SPEC_PROBE_H */
