/* plinth plugin ABI — umbrella header: everything a plugin or host needs. */
#ifndef PLINTH_PLINTH_H
#define PLINTH_PLINTH_H
#include "plinth/abi.h"
#include "plinth/backend.h"
#include "plinth/ext_cuda.h"
#include "plinth/ext_early_exit.h"
#include "plinth/ext_kv_watermark.h"
#include "plinth/grammar.h"
#include "plinth/graph_runner.h"
#include "plinth/host_api.h"
#include "plinth/kv_cache.h"
#include "plinth/model.h"
#include "plinth/plugin.h"
#include "plinth/prefix_cache.h"
#include "plinth/scheduler.h"
#include "plinth/speculator.h"

/* Last: the frozen sizes and the layout pins, which need every type above. */
#include "plinth/abi_versions.h"

#include "plinth/abi_layout_check.h"
#endif /* PLINTH_PLINTH_H */
