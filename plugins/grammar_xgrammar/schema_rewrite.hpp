#pragma once
// Rewrites a JSON Schema, before the subset check (schema_subset.hpp) and XGrammar see it, into a
// schema built from the keywords the engine enforces. Every rewrite is exact (the same instances
// are valid) or stricter (some valid instances are refused, never an invalid one accepted); the
// stricter ones are named below. What cannot be rewritten so is left in place for the subset check
// to refuse by pointer, or refused here by pointer.
//
// - allOf: merged into one schema. A schema is the conjunction of its keywords, so members merge
//   keyword by keyword: disjoint keywords are united; type (intersection), enum (intersection),
//   const (equal), required (union), lower bounds (the largest), upper bounds (the smallest),
//   items (merged), properties with additionalProperties (a member that does not list a property
//   constrains it by its additionalProperties: both conditions are kept, per property, and the
//   additionalProperties of the members are merged for the rest), anyOf (distributed: A and
//   anyOf[B, C] = anyOf[A and B, A and C], alternatives that cannot hold dropped), oneOf
//   (distributed alike: exactly one of B, C holds together with A iff exactly one of A and B,
//   A and C holds). Local $ref members are resolved and merged. Refused by pointer: two different
//   patterns, formats or multipleOf values, prefixItems beside items, patternProperties beside
//   other object keywords of another member, more than one oneOf, more than 16 alternatives.
//   Exact.
// - format: "date" and "date-time" become a pattern of RFC 3339 (month lengths and leap years
//   checked; year 0000, leap seconds ("60") and lower-case "t" / "z" refused: stricter, as Python's
//   datetime); formats that no JSON Schema draft defines ("int32", "url", ...) are annotations and
//   are dropped, as validators ignore them. Exact otherwise.
// - patternProperties: patterns matching every key (".*", "") become additionalProperties (and
//   are merged into the matching named properties); one pattern P with schema S beside an
//   additionalProperties A that is not false becomes additionalProperties S and A (stricter: keys
//   not matching P must satisfy S too), S merged into the named properties P matches (ECMAScript
//   search, std::regex). One pattern with additionalProperties false, no properties and no
//   required stays for the engine (keys must match P in full: stricter than a search). Others
//   stay and are refused. (`strict`: an absent additionalProperties counts as false.)
// - A required name that properties does not list is added to properties with the schema
//   additionalProperties gives it (the engine enforces required names only among the listed
//   ones); refused by pointer when additionalProperties is false. Exact.
// - A schema whose string, number or array keywords stand without that single "type" (no type,
//   or a list such as ["string", "null"]) becomes an anyOf with one alternative per type holding
//   that type's keywords (a keyword constrains only instances of its type). Exact.
// - pattern: ECMAScript's '.' (ecmascript_dots), and the UTF-8 surrogates excluded from its
//   complements (json_string_classes.hpp: XGrammar's UTF-8 decoding takes them). Exact.

#include <nlohmann/json.hpp>

#include "schema_subset.hpp"

namespace plinth::grammar {

/// Rewrites `schema` in place (the root; local $ref resolve against it as given). False with
/// `why` (the pointer into the schema as given) when a rewrite needed is not possible exactly.
/// Thread-safe (no state).
bool rewrite_schema(nlohmann::ordered_json& schema, bool strict, SchemaRefusal& why);

/// `pattern` with each '.' outside a character class written as [^\n\r\u2028\u2029]: ECMAScript's
/// (and JSON Schema's) dot, which does not match line terminators; XGrammar's matches every
/// character. Applied to JSON Schema patterns (pattern, patternProperties) and to regex specs.
std::string ecmascript_dots(const std::string& pattern);

/// The RFC 3339 full-date pattern used for format "date" (exposed for the tests).
const char* date_pattern();
/// The RFC 3339 date-time pattern used for format "date-time".
const char* date_time_pattern();

}  // namespace plinth::grammar
