#pragma once
// JSON text read into nlohmann::ordered_json (members in the text's order) in time linear in the
// text. nlohmann's own ordered_json::parse is not: its ordered_map is a vector of
// pair<const std::string, json>, which cannot be moved, so each growth of an object copies every
// member parsed so far, subtrees included (a member after a deep one copies the whole subtree at
// every level: quadratic in the depth), and each new key is looked up by a linear scan (quadratic
// in the width). A 300 KB request body of 20,000 nested objects took 20 s on a network thread.

#include <string_view>

#include <nlohmann/json.hpp>

namespace plinth {

/// `text` parsed as one JSON value (RFC 8259; nothing but whitespace after it), objects keeping
/// their members in the text's order; a key given twice keeps its first position and its last
/// value, as nlohmann::ordered_json::parse does. A value that is_discarded() when `text` is not
/// JSON (as ordered_json::parse(text, nullptr, false)). Time and memory linear in the text, no
/// recursion (any depth). Pure; any thread.
nlohmann::ordered_json parse_ordered_json(std::string_view text);

}  // namespace plinth
