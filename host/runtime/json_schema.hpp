#pragma once
// Validation of plugin configs against the JSON Schema each plugin publishes (docs/architecture.md,
// "The host"): the subset configs need, from JSON Schema draft 2020-12 (https://json-schema.org/
// draft/2020-12/json-schema-validation): type, enum, minimum, maximum, exclusiveMinimum,
// exclusiveMaximum, required, additionalProperties, default, items (one schema for every element;
// the draft-7 array form is 2020-12's prefixItems, not in the subset), properties, boolean schemas
// (true: any value, false: none), description (+ title, $schema, $comment), and one plinth
// keyword:
//   "x-power-of-two": true   the integer must be a power of two (within minimum/maximum).
// Defaults of absent properties are filled in, so a plugin sees every option. Deliberate plinth
// rule beyond the standard (which lets a default be anything): a default must satisfy its own
// schema; check_schema refuses a schema whose default does not, and validate_json checks each
// default it fills in.
//
// Checked against the official JSON-Schema Test Suite (Debian json-schema-test-suite 2.0.0,
// draft7: the newest draft it ships; these keywords mean the same in 2020-12) by
// tests/host/runtime/test_json_schema_suite.cpp, every group whose schema uses only the subset.
// Cases run (all agree) / skipped: type 59/0, enum 9/0, minimum 4/0, maximum 4/0,
// exclusiveMinimum 4/0, exclusiveMaximum 4/0, required 7/0, additionalProperties 6/8
// (patternProperties), default 1/2 (minLength), items 8/9 (array form), properties 10/8
// (patternProperties), boolean_schema 18/0, optional/bignum 9/0, optional/zeroTerminatedFloats
// 1/0: 144 agree, 27 skipped, 1 exception, the default rule above: default.json's "invalid type
// for default", whose schema check_schema refuses and whose "still valid when the invalid default
// is used" validate_json finds invalid.

#include <stdexcept>
#include <string>

#include <nlohmann/json.hpp>

namespace plinth {

/// A value that does not satisfy its schema. what() is "<path>: <message>".
class SchemaError : public std::runtime_error {
 public:
  SchemaError(std::string path, std::string message)
      : std::runtime_error(path + ": " + message),
        path_(std::move(path)),
        message_(std::move(message)) {}
  /// JSON path of the offending value, e.g. "plugins[2].config.block_size".
  const std::string& path() const { return path_; }
  /// What is wrong and what is allowed, e.g. "must be a power of two between 1 and 256, got 24".
  const std::string& message() const { return message_; }

 private:
  std::string path_;
  std::string message_;
};

/// Throws SchemaError (path relative to `path`, e.g. "schema.properties.x") when `schema` uses a
/// keyword outside the subset above or a keyword with a value of the wrong type: the host would
/// otherwise silently not check it.
void check_schema(const nlohmann::json& schema, const std::string& path);

/// Validates `instance` (at JSON path `path`) against `schema` and fills in defaults of absent
/// object properties (recursively). Throws SchemaError on the first violation.
void validate_json(const nlohmann::json& schema, nlohmann::json& instance, const std::string& path);

/// `path` extended by an object key: "a.b", or a["odd key"] when the key is not an identifier.
std::string json_path_key(const std::string& path, const std::string& key);
/// `path` extended by an array index: "a[3]".
std::string json_path_index(const std::string& path, size_t index);

}  // namespace plinth
