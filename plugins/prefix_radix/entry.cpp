// prefix_radix — the plugin library's one exported symbol: the prefix_cache table over
// PrefixRadixPlugin.
#include <plinth/prefix_cache.hpp>

#include "prefix_radix_config.hpp"
#include "prefix_radix_plugin.hpp"

namespace {
const plinth_prefix_cache_vtable kTable =
    plinth::sdk::prefix_cache_vtable<plinth::prefix_radix::PrefixRadixPlugin>();
}  // namespace

PLINTH_PLUGIN("prefix_radix", "0.1.0", PLINTH_KIND_PREFIX_CACHE,
              "radix-tree prefix cache (RadixAttention): shares the KV blocks of common prompt "
              "prefixes, LRU eviction of unlocked leaves",
              plinth::prefix_radix::kConfigSchema, &kTable)
