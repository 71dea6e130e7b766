/* plinth plugin ABI — layout pins of released versions (ABI 1.0, x86-64 / aarch64 LP64). A change
 * that breaks one of these breaks every plugin built before it: grow structs only at the end. */
#ifndef PLINTH_ABI_LAYOUT_CHECK_H
#define PLINTH_ABI_LAYOUT_CHECK_H
#include "plinth/plinth.h"

#if defined(__cplusplus)
#define PLINTH_STATIC_ASSERT static_assert
#else
#define PLINTH_STATIC_ASSERT _Static_assert
#endif

#if UINTPTR_MAX == 0xFFFFFFFFFFFFFFFFu
PLINTH_STATIC_ASSERT(sizeof(plinth_error) == 1032, "plinth_error layout changed");
PLINTH_STATIC_ASSERT(offsetof(plinth_plugin_descriptor, vtable) == 48, "descriptor layout changed");
PLINTH_STATIC_ASSERT(sizeof(plinth_plugin_descriptor) == 56, "descriptor layout changed");
PLINTH_STATIC_ASSERT(sizeof(plinth_lifecycle) == 32, "plinth_lifecycle layout changed");
PLINTH_STATIC_ASSERT(offsetof(plinth_vtable_head, lifecycle) == 8, "vtable head layout changed");
PLINTH_STATIC_ASSERT(sizeof(plinth_host_api) == 64, "plinth_host_api layout changed");
PLINTH_STATIC_ASSERT(sizeof(plinth_create_args) == 88, "plinth_create_args layout changed");
PLINTH_STATIC_ASSERT(sizeof(plinth_batch) == 88, "plinth_batch layout changed");
PLINTH_STATIC_ASSERT(sizeof(plinth_backend_vtable) == 80, "backend table layout changed");
PLINTH_STATIC_ASSERT(sizeof(plinth_kv_cache_vtable) == 128, "kv_cache table layout changed");
PLINTH_STATIC_ASSERT(sizeof(plinth_scheduler_vtable) == 80, "scheduler table layout changed");
PLINTH_STATIC_ASSERT(sizeof(plinth_prefix_cache_vtable) == 80, "prefix table layout changed");
PLINTH_STATIC_ASSERT(sizeof(plinth_speculator_vtable) == 72, "speculator table layout changed");
PLINTH_STATIC_ASSERT(sizeof(plinth_graph_runner_vtable) == 64, "graph runner table layout changed");
PLINTH_STATIC_ASSERT(sizeof(plinth_model_config) == 64, "model config layout changed");
PLINTH_STATIC_ASSERT(sizeof(plinth_tensor_view) == 72, "tensor view layout changed");
#endif

#endif /* PLINTH_ABI_LAYOUT_CHECK_H */
