#pragma once
// Two corrections to the EBNF that XGrammar 0.2.9 builds from a JSON Schema
// (xgrammar::Grammar::FromJSONSchema(...).ToString()), applied before the plugin compiles it; both
// were found by the JSON Schema reference matcher (tests/plugins/grammar_xgrammar/reference_json)
// and each let invalid JSON through:
// - a string with minLength / maxLength is built from the class [^"\\\r\n], which takes the raw
//   control characters U+0000-U+001F other than \n and \r (a raw tab inside a JSON string is
//   invalid JSON): that class becomes [^\0-\x1f"\\];
// - XGrammar's UTF-8 decoding takes the surrogates U+D800-U+DFFF (bytes ED A0-BF xx: ill-formed
//   UTF-8, so the output would not be UTF-8 JSON text), which every negated class then matches:
//   each negated class outside a quoted literal also excludes \ud800-\udfff.
// Both only narrow what a class matches to what JSON allows there; the rest of the text is kept
// byte for byte.

#include <string>

namespace plinth::grammar {

/// `ebnf` (XGrammar's printed grammar) with the two corrections above.
std::string json_string_classes(const std::string& ebnf);

/// A JSON Schema pattern (XGrammar keeps patterns as regular expressions, outside the printed
/// classes above) with the surrogates excluded where it names a complement: each negated class
/// `[^...]` gains \uD800-\uDFFF, and \S, \W, \D outside a class become [^\s\uD800-\uDFFF] (and
/// alike). A positive class holding \S, \W, \D or a range across U+D800-U+DFFF keeps them (not
/// rewritten).
std::string pattern_without_surrogates(const std::string& pattern);

}  // namespace plinth::grammar
