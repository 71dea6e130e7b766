#pragma once
// The JSON Schema subset the grammar plugin enforces, checked before XGrammar sees a schema.
// XGrammar ignores some keywords it cannot enforce (with only a log line: multipleOf on numbers,
// minLength together with pattern, uniqueItems, not ...); a constraint that is silently dropped
// would let invalid output through, so every keyword outside the subset below is refused here,
// naming its JSON pointer (RFC 6901), and the request fails with 400 instead.
//
// Enforced: type (string or array of names), properties, required, additionalProperties (bool or
// schema), patternProperties (one pattern, beside additionalProperties false and no properties or
// required: keys must match it in full), items (a schema), prefixItems, minItems, maxItems, enum,
// const, anyOf, oneOf (alternatives checked pairwise disjoint by type or const/enum where the
// plugin can tell, else refused), allOf with one member (each combinator and $ref without sibling
// assertions, which the engine would drop; enum / const beside type only, their values of that
// type), local $ref ("#", "#/$defs/...", "#/definitions/..."), minLength, maxLength (not together
// with pattern or format), pattern (no lookaround, no backreference, anchors only at the ends; not
// with format), format (time, duration, email, hostname, ipv4, ipv6, uri, uuid; others refused),
// minimum, maximum, exclusiveMinimum, exclusiveMaximum, and boolean schemas. Annotations (title,
// description, default, examples, $schema, $id, $comment, deprecated, readOnly, writeOnly, $defs /
// definitions as containers) are ignored as validators ignore them.
// The plugin runs schema_rewrite.hpp first: allOf of several members, date / date-time formats,
// other patternProperties, oneOf with disjoint alternatives and typed keywords without their type
// reach this check rewritten into the forms above.

#include <nlohmann/json.hpp>
#include <string>

namespace plinth::grammar {

/// Why a schema is refused: `pointer` names the keyword ("/properties/a/multipleOf"), `message`
/// says what and the way out.
struct SchemaRefusal {
  std::string pointer;
  std::string message;
};

/// Nesting deeper than this (schemas inside schemas) is refused.
inline constexpr int kMaxSchemaDepth = 64;

/// Checks `schema` (any JSON value) against the subset: true when every keyword is enforced;
/// otherwise false with `why` naming the first keyword refused (depth-first, keys in order).
/// Thread-safe (no state).
bool check_schema_subset(const nlohmann::json& schema, SchemaRefusal& why);

}  // namespace plinth::grammar
