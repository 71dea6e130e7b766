// kv_paged — the plugin library's one exported symbol: the kv_cache table over KvPagedPlugin.
#include <plinth/kv_cache.hpp>

#include "kv_paged_config.hpp"
#include "kv_paged_plugin.hpp"

namespace {
const plinth_kv_cache_vtable kTable =
    plinth::sdk::kv_cache_vtable<plinth::kv_paged::KvPagedPlugin>();
}  // namespace

PLINTH_PLUGIN("kv_paged", "0.1.0", PLINTH_KIND_KV_CACHE,
              "paged KV cache: block pool, block tables, ref counts, copy-on-write",
              plinth::kv_paged::kConfigSchema, &kTable)
