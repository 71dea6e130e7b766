// The host's handling of a plugin's config, for the plugins' config tests: Pipeline::load
// (host/runtime/pipeline.cpp) validates the manifest's `config` against the JSON Schema the plugin
// publishes (validate_json, host/runtime/json_schema.hpp), filling in the schema's defaults, and
// create() receives the result as text. A bad value is refused there, as a ManifestError at
// `plugins[i].config.<key>`; the plugin only reads what passes. Tests that use this compile
// host/runtime/json_schema.cpp in (it depends on nlohmann/json alone).
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "runtime/json_schema.hpp"

namespace plinth::test {

/// What the host makes of `config_json` for a plugin publishing `schema`.
struct HostConfig {
  std::string error;  ///< "plugins[1].config.<key>: <message>" when refused, else empty
  std::string text;   ///< the config create() receives (defaults filled) when accepted
};

/// Validates `config_json` (a JSON object's text) against `schema` as Pipeline::load does, at
/// the JSON path "plugins[1].config".
inline HostConfig host_config(const char* schema, const std::string& config_json) {
  nlohmann::json config = nlohmann::json::parse(config_json);
  try {
    validate_json(nlohmann::json::parse(schema), config, "plugins[1].config");
  } catch (const SchemaError& e) {
    return {e.what(), ""};
  }
  return {"", config.dump()};
}

}  // namespace plinth::test
