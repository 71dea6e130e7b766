#pragma once
// Decides whether one given JSON value satisfies a JSON Schema, for the keywords whose meaning
// does not depend on the draft or on options; anything else is undecided. The rewrite
// (schema_rewrite.hpp) uses it on schemas that list their values (enum / const): such a schema
// is the list of the values that satisfy all of it, whatever other keywords (not, multipleOf,
// uniqueItems, ...) stand beside the list.
//
// Decided: boolean schemas, type, enum, const, not, allOf, anyOf, oneOf, if / then / else,
// minimum / maximum / exclusiveMinimum / exclusiveMaximum (numbers or draft-4 booleans),
// multipleOf (integers), minLength / maxLength (code points), pattern (ASCII patterns and
// strings, ECMAScript search), items (a schema, or draft-7 tuples with additionalItems),
// prefixItems, minItems / maxItems, uniqueItems, contains, properties, patternProperties (ASCII),
// additionalProperties, required, minProperties / maxProperties, propertyNames, dependencies,
// dependentRequired, dependentSchemas, a local $ref alone (besides annotations), and
// annotations (title, description, ...). Undecided (nullopt): format, any other keyword, a
// $ref beside assertions (its meaning differs between drafts), a number that is integral but
// written with a fraction under "integer", deeper than 64 levels.

#include <nlohmann/json.hpp>
#include <optional>

namespace plinth::grammar {

/// Whether `value` satisfies `schema` (local $refs resolve against `root`); nullopt when a
/// keyword involved is not decided here. Thread-safe (no state).
std::optional<bool> satisfies(const nlohmann::json& value, const nlohmann::json& schema,
                              const nlohmann::json& root);

}  // namespace plinth::grammar
