// prefix_radix — the manifest config: the namespace salt and the cap on cached blocks. A pure
// function, so tests check it without a kv_cache.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace plinth::prefix_radix {

/// Upper bound on max_cached_blocks: kv_paged's largest pool (block ids are int32).
inline constexpr uint32_t kMaxCachedBlocksLimit = 1u << 24;

struct PrefixRadixConfig {
  std::string salt;                // prepended to every key's salt (exact bytes)
  uint32_t max_cached_blocks = 0;  // 0 = no cap besides the pool; else insert keeps within it
};

/// Reads the config create() receives (JSON text; "" or "{}" = defaults), which the host has
/// validated against kConfigSchema (types, max_cached_blocks <= kMaxCachedBlocksLimit, no unknown
/// keys). Throws std::invalid_argument naming the key only for what C++ cannot read (a value of
/// the wrong JSON type, an integer that does not fit its field).
PrefixRadixConfig parse_config(std::string_view json);

/// The tree namespace of a key: the config salt, the model's identity and the key's salt, each
/// length-prefixed ("<bytes>:<text>"), so the encoding is injective: keys differing in any part
/// never share a block.
std::string namespace_of(std::string_view config_salt, std::string_view model,
                         std::string_view key_salt);

/// The config's JSON Schema (the subset the host validates), published by the plugin.
extern const char* const kConfigSchema;

}  // namespace plinth::prefix_radix
