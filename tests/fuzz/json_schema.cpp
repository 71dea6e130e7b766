// JSON-Schema subset validator: input is a JSON array [schema, instance]. A schema check_schema
// accepts is then used to validate the instance; errors must be SchemaError.
#include <nlohmann/json.hpp>

#include "fuzz_support.hpp"
#include "fuzz_targets.hpp"
#include "runtime/json_schema.hpp"

namespace plinth::fuzz {

void fuzz_json_schema(const uint8_t* data, size_t size) {
  nlohmann::json doc =
      nlohmann::json::parse(data, data + size, nullptr, /*allow_exceptions=*/false);
  if (doc.is_discarded() || !doc.is_array() || doc.size() != 2) return;
  const nlohmann::json& schema = doc[0];
  try {
    check_schema(schema, "schema");
  } catch (const SchemaError&) {
    return;
  }
  nlohmann::json instance = doc[1];
  try {
    validate_json(schema, instance, "config");
  } catch (const SchemaError&) {
    return;
  }
  // Filling in defaults gives an instance that is valid and stays as it is.
  nlohmann::json again = instance;
  try {
    validate_json(schema, again, "config");
  } catch (const SchemaError&) {
    crash_if(true, "an instance with its defaults filled in no longer validates");
  }
  crash_if(again != instance, "filling in defaults is not idempotent");
}

}  // namespace plinth::fuzz

PLINTH_FUZZ_ENTRY(plinth::fuzz::fuzz_json_schema)
