#pragma once
// The member order of the JSON Schema grammar's output. XGrammar writes (and accepts) an object's
// members in the order its schema's "properties" lists them, the members it does not list after
// them; JSON objects are unordered (RFC 8259, section 4), so an instance whose members come in
// another order is the same value. order_members_like_schema rewrites an instance into that
// order, so that a test or benchmark feeding labelled instances through a matcher judges the
// value, not the order its author wrote it in (as it serializes the instance in the engine's
// whitespace policy).

#include <nlohmann/json.hpp>

namespace plinth::grammar {

/// Reorders the members of every object in `instance` (recursively, in place) to the order of
/// the schema that applies to it under `schema`, which must be a schema as prepare_json_schema
/// returns it (rewritten: allOf merged, combinators alone): listed properties first in
/// "properties" order, the others after them in their order. Local "$ref"s resolve against
/// `schema`; under anyOf / oneOf the alternative listing most of the object's members (or, for
/// another value, the first whose "type" fits) is followed. Only the order changes: the value
/// is the same; where no schema applies the members keep their order. Thread-safe (no state).
void order_members_like_schema(nlohmann::ordered_json& instance,
                               const nlohmann::ordered_json& schema);

}  // namespace plinth::grammar
