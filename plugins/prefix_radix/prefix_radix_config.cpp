#include "prefix_radix_config.hpp"

#include <nlohmann/json.hpp>

#include <stdexcept>

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

namespace {
[[noreturn]] void bad(const std::string& key, const std::string& what) {
  throw std::invalid_argument("prefix_radix: config." + key + " " + what);
}
}  // namespace

PrefixRadixConfig parse_config(std::string_view json) {
  PrefixRadixConfig c;
  if (json.empty()) return c;
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(json);
  } catch (const nlohmann::json::parse_error& e) {
    throw std::invalid_argument(std::string("prefix_radix: config is not valid JSON: ") + e.what());
  }
  if (!j.is_object()) throw std::invalid_argument("prefix_radix: config must be a JSON object");
  for (const auto& [key, v] : j.items()) {
    if (key == "salt") {
      if (!v.is_string()) bad(key, "must be a string, got " + v.dump());
      c.salt = v.get<std::string>();
    } else if (key == "max_cached_blocks") {
      const std::string range = "0.." + std::to_string(kMaxCachedBlocksLimit);
      if (!v.is_number_integer() || (!v.is_number_unsigned() && v.get<int64_t>() < 0)) {
        bad(key, "must be an integer in " + range + ", got " + v.dump());
      }
      const auto x = v.get<uint64_t>();
      if (x > kMaxCachedBlocksLimit) bad(key, "must be in " + range + ", got " + v.dump());
      c.max_cached_blocks = static_cast<uint32_t>(x);
    } else {
      throw std::invalid_argument("prefix_radix: unknown config key '" + key +
                                  "'; allowed: salt, max_cached_blocks");
    }
  }
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
