// Good kv_cache for the host's tests (test_plugins.hpp).
#include "test_plugins.hpp"

static const plinth_kv_cache_vtable kTable = plinth::sdk::kv_cache_vtable<plinth_test::TestKv>();
PLINTH_PLUGIN("test_kv", "0.1.0", PLINTH_KIND_KV_CACHE, "kv_cache sizing its pool, for host tests",
              plinth_test::kKvSchema, &kTable)
