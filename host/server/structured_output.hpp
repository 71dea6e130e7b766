#pragma once
// Structured outputs in OpenAI's and vLLM's request fields, read into a GrammarSpec
// (engine/grammar.hpp) that the grammar plugin compiles:
//  - response_format (https://platform.openai.com/docs/api-reference/chat/create):
//    {"type": "text"} (no constraint), {"type": "json_object"} (any JSON object),
//    {"type": "json_schema", "json_schema": {"name", "schema", "strict"}} (strict: true treats an
//    absent additionalProperties as false, as OpenAI does);
//  - vLLM's structured_outputs: {"json": <schema or its JSON text>} | {"regex": "..."} |
//    {"choice": ["a", "b"]} | {"grammar": "<EBNF>"}, exactly one.
// Wrong types → 422, bad values and both fields at once → 400, each naming the field.

#include <optional>
#include <string_view>

#include <nlohmann/json.hpp>

#include "engine/grammar.hpp"

namespace plinth::server {

/// The constraint `body` asks for, or nullopt for none (absent, or response_format text).
/// `raw` is the body's text: a JSON Schema is taken from it with its members in their order (the
/// order the output follows), which `body` (sorted keys) has lost. Throws ApiError.
std::optional<GrammarSpec> parse_structured_output(const nlohmann::json& body,
                                                   std::string_view raw);

}  // namespace plinth::server
