#include "prefix_radix_config.hpp"

#include <plinth/config.hpp>

namespace plinth::prefix_radix {

// clang-format off
const char* const kConfigSchema = R"schema({
  "type": "object",
  "additionalProperties": false,
  "properties": {
    "salt": {"type": "string", "default": "",
      "description": "namespace prefix for every cached key; keys whose salts differ never share a block"},
    "max_cached_blocks": {"type": "integer", "minimum": 0, "maximum": 16777216, "default": 0,
      "description": "most KV blocks the cache keeps referenced; insert evicts least recently used unlocked blocks to stay within it; 0 = no cap besides the KV pool"}
  }
})schema";
// clang-format on

PrefixRadixConfig parse_config(std::string_view json) {
  // Types, ranges and keys are kConfigSchema's, checked by the host before create().
  const sdk::ConfigReader config("prefix_radix", json);
  PrefixRadixConfig c;
  c.salt = config.get<std::string>("salt", c.salt);
  c.max_cached_blocks = config.get<uint32_t>("max_cached_blocks", c.max_cached_blocks);
  return c;
}

std::string namespace_of(std::string_view config_salt, std::string_view model,
                         std::string_view key_salt) {
  std::string ns;
  for (std::string_view part : {config_salt, model, key_salt}) {
    ns += std::to_string(part.size());
    ns += ':';
    ns.append(part);
  }
  return ns;
}

}  // namespace plinth::prefix_radix
