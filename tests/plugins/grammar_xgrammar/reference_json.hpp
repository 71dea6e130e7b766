#pragma once
// A slow reference matcher for JSON Schema, written for the tests and independent of XGrammar:
// every question re-parses the whole byte string from the start by backtracking recursive descent
// over the schema (continuation passing: each construct hands every position where it can end to
// the rest of the parse). `viable(bytes)`: some continuation of `bytes` is an instance; running out
// of input inside a construct counts as viable when that construct can still be completed (the
// schemas after it are assumed satisfiable). `complete(bytes)`: `bytes` is an instance.
//
// Input: a schema as the plugin hands it to XGrammar (prepare_json_schema: rewritten and held to
// the subset), so the keywords are: type (a name or a list), properties (in schema order),
// required, additionalProperties (bool or schema), items, prefixItems, minItems / maxItems, enum,
// const, anyOf, oneOf (the rewrite keeps only disjoint ones, so it is read as anyOf), a one-member
// allOf, local $ref, minLength / maxLength, pattern (reference_regex.hpp), format uuid, minimum /
// maximum / exclusiveMinimum / exclusiveMaximum, boolean schemas. Anything else (other formats,
// patternProperties, ...) throws ReferenceJson::Unsupported from the constructor: the tests skip
// such schemas.
//
// The semantics are JSON Schema's. The instance's serialization is the one the plugin's engine
// writes, which is narrower than JSON (a choice of output form, never a looser meaning); the
// reference follows these rules, each checked against XGrammar's grammar dumps for 0.2.9:
// - whitespace: no whitespace before or after the root value; after '{' / '[' (one run in an
//   empty object or array; two in an empty array with prefixItems), around ',' and ':', before
//   '}' / ']' a run of at most `max_ws` bytes of [ \n\r\t] (the plugin's bounded policy; 0 =
//   compact);
// - an object's listed properties in the order of "properties" (optional ones may be left out,
//   required ones may not), then additional properties (only where additionalProperties allows
//   them), whose keys differ from every listed name (compared as written); duplicate additional
//   keys are not checked; an object with nothing required may also start with an additional one;
// - enum / const: the compact serialization of each value (nlohmann's dump: keys in given order,
//   no whitespace, shortest numbers, control characters escaped);
// - strings with minLength / maxLength or a pattern are written without escapes: each character
//   (a code point, counted as JSON Schema counts length) raw, never '"', '\' or a control character
//   U+0000-U+001F (those would make invalid JSON); plain strings may use every JSON escape;
// - integers: 0 or -?[1-9][0-9]* (no "-0", fraction or exponent); numbers without a bound: JSON
//   numbers; numbers with a bound: -?(0|[1-9][0-9]*)(.[0-9]{1,6})? (no exponent, at most six
//   fraction digits), "-0" without a fraction never, "-0.0..." only when the lower bound is below
//   0;
// - an object's keywords without "type" make it an object (XGrammar's reading; stricter).
// Prefix viability of a bounded number: the values a prefix can still become form intervals (for
// digits D: D itself and D followed by k more digits, [D*10^k, (D+1)*10^k) for each k, with
// fractions on the 10^-6 grid; after a '.', [D.F, D.F + 10^-len(F))); the prefix is viable when one
// interval meets the bounds (computed exactly on the scaled grid in 128-bit integers).
// UTF-8: a string's bytes must decode (no overlong forms, surrogates or code points above
// U+10FFFF); an unfinished sequence at the end of the input is viable when it can still become a
// code point the string takes.

#include <cstddef>
#include <functional>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>
#include <string_view>

#include "reference_regex.hpp"

namespace plinth::grammar::testing {

class ReferenceJson {
 public:
  struct Unsupported : std::invalid_argument {
    using std::invalid_argument::invalid_argument;
  };

  struct Options {
    int max_ws = 4;  ///< longest whitespace run (the plugin's bounded policy)
  };

  /// `schema`: JSON text of the prepared schema. Throws Unsupported (naming the keyword).
  explicit ReferenceJson(std::string_view schema, Options options);
  explicit ReferenceJson(std::string_view schema) : ReferenceJson(schema, Options{}) {}

  /// Some continuation of `bytes` is an instance (in the serialization above).
  bool viable(std::string_view bytes) const;
  /// `bytes` is an instance.
  bool complete(std::string_view bytes) const;

 private:
  using json = nlohmann::ordered_json;
  using K = std::function<bool(size_t)>;
  struct Run {
    std::string_view in;
    bool prefix;  // running out of input counts as success
    mutable int depth = 0;
  };
  void check(const json& s, const std::string& ptr);
  void check_children(const std::string& key, const json& v, const std::string& ptr);
  void add_regex(const std::string& pattern, const std::string& ptr);
  const json& resolve(const std::string& ref) const;
  bool value(const Run& r, const json& s, size_t p, const K& k) const;
  bool typed(const Run& r, const json& s, const std::string& type, size_t p, const K& k) const;
  bool any(const Run& r, size_t p, const K& k) const;
  bool ws(const Run& r, size_t p, const K& k) const;
  bool literal(const Run& r, std::string_view lit, size_t p, const K& k) const;
  bool object(const Run& r, const json& s, size_t p, const K& k) const;
  bool array(const Run& r, const json& s, size_t p, const K& k) const;
  bool string(const Run& r, const json& s, size_t p, const K& k) const;
  bool plain_string(const Run& r, size_t p,
                    const std::function<bool(size_t, std::string_view)>& k) const;
  bool number(const Run& r, const json& s, bool integer, size_t p, const K& k) const;

  json root_;
  int max_ws_;
  std::map<std::string, std::shared_ptr<ReferenceRegex>> regexes_;
};

}  // namespace plinth::grammar::testing
