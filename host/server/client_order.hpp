#pragma once
// The chat body that the Anthropic Messages and Responses APIs are translated into, and the body
// `generate --prompts-file` makes of a line (cli/batch_input.cpp), are nlohmann::json, whose
// objects sort their members; the JSON Schemas they carry (response_format's, text.format's,
// structured_outputs.json, the tools' parameters / input_schema) must keep the client's member
// order, which is the order the grammar writes an object's members in and the order the tools
// are shown to the model (as chat completions keeps it: parse_structured_output,
// parse_tool_request).

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

namespace plinth::server {

/// A value the translation copied: its JSON pointer in the client's body and in the chat body.
struct CopiedValue {
  std::string from;
  std::string to;
};

/// `chat` as JSON text (invalid UTF-8 replaced, as dump_json) where each `copied` value present
/// in both is written as the client's text `client_body` has it, members in the client's order.
/// `client_body` must be the text `chat` was translated from (the same values: the parsers agree
/// on repeated keys). Linear in the sizes; throws nothing for absent pointers (left as in `chat`).
std::string chat_text_in_client_order(const nlohmann::json& chat, std::string_view client_body,
                                      const std::vector<CopiedValue>& copied);

}  // namespace plinth::server
