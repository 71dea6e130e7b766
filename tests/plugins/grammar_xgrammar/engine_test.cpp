// The engine over a small hand-made vocabulary: masks, accept, rollback, can_end, stop ids,
// forced bytes, the compile cache, refusals, and the compile time limit.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "grammar_engine.hpp"

namespace {

using plinth::grammar::CompileError;
using plinth::grammar::CompileOptions;
using plinth::grammar::Engine;
using plinth::grammar::Matcher;
using plinth::grammar::SpecKind;
using plinth::grammar::Vocabulary;

// ids: 0 "<eos>" (control, stop), 1 "<|im_start|>" (control), then text tokens.
Vocabulary tiny_vocab() {
  Vocabulary v;
  const std::vector<std::string> text = {"{", "}", "\"",  "a",  "b",   ":",   " ",  "1",
                                         "2", ",", "yes", "no", "{\"", "\":", "ab", "<|im_start|>"};
  v.bytes = {"<eos>", "<|im_start|>"};
  v.types = {3, 3};
  for (const auto& t : text) {
    v.bytes.push_back(t);
    v.types.push_back(1);
  }
  v.stop_ids = {0};
  return v;
}

int32_t id_of(const Vocabulary& v, const std::string& s) {
  for (size_t i = 2; i < v.bytes.size(); ++i) {
    if (v.bytes[i] == s) return static_cast<int32_t>(i);
  }
  return -1;
}

std::vector<int32_t> allowed(Engine& e, Matcher& m) {
  std::vector<uint32_t> row(e.words_per_row());
  m.fill(row.data(), static_cast<uint32_t>(row.size()), e.vocab_size());
  std::vector<int32_t> out;
  for (int32_t t = 0; t < e.vocab_size(); ++t) {
    if ((row[static_cast<size_t>(t) / 32] >> (t % 32)) & 1u) out.push_back(t);
  }
  return out;
}

TEST(GrammarEngine, ChoiceMasksAcceptsEndsAndRollsBack) {
  const Vocabulary v = tiny_vocab();
  Engine e(v);
  auto g = e.compile(SpecKind::kChoice, R"(["yes", "no"])", {});
  Matcher m(g);
  const std::vector<int32_t> first = allowed(e, m);
  EXPECT_EQ(first, (std::vector<int32_t>{id_of(v, "yes"), id_of(v, "no")}));
  EXPECT_FALSE(m.can_end());
  EXPECT_FALSE(m.accept(id_of(v, "a")));  // refused, state unchanged
  EXPECT_TRUE(m.accept(id_of(v, "no")));
  EXPECT_TRUE(m.can_end());
  EXPECT_EQ(allowed(e, m), std::vector<int32_t>{0});  // only the stop id where it can end
  m.rollback(1);
  EXPECT_EQ(allowed(e, m), first);
  EXPECT_THROW(m.rollback(1), std::invalid_argument);
  EXPECT_TRUE(m.accept(id_of(v, "yes")));
  EXPECT_TRUE(m.accept(0));
  EXPECT_TRUE(m.terminated());
  EXPECT_TRUE(allowed(e, m).empty());
}

TEST(GrammarEngine, ControlTokensAreNeverAllowedEvenWhenTheirTextFits) {
  const Vocabulary v = tiny_vocab();
  Engine e(v);
  // A regex that would match the control token's text: the control id stays masked, and the
  // user-defined text token with the same bytes is allowed.
  auto g = e.compile(SpecKind::kRegex, R"(<\|im_start\|>)", {});
  Matcher m(g);
  const std::vector<int32_t> a = allowed(e, m);
  EXPECT_EQ(std::count(a.begin(), a.end(), 1), 0);
  EXPECT_EQ(std::count(a.begin(), a.end(), id_of(v, "<|im_start|>")), 1);
}

TEST(GrammarEngine, JsonSchemaForcedBytesAndCompactWhitespace) {
  const Vocabulary v = tiny_vocab();
  Engine e(v);
  CompileOptions compact;
  compact.compact = true;
  auto g = e.compile(SpecKind::kJsonSchema,
                     R"({"type": "object", "properties": {"ab": {"type": "integer"}},
                         "required": ["ab"], "additionalProperties": false})",
                     compact);
  Matcher m(g);
  EXPECT_EQ(m.forced_bytes(), "{\"ab\":");
  for (const char* t : {"{\"", "ab", "\":", "1", "2", "}"}) {
    ASSERT_TRUE(m.accept(id_of(v, t))) << t;
  }
  EXPECT_TRUE(m.can_end());
  Matcher spaced(g);
  EXPECT_TRUE(spaced.accept(id_of(v, "{")));
  EXPECT_FALSE(spaced.accept(id_of(v, " ")));  // compact: no whitespace
}

TEST(GrammarEngine, BoundedWhitespaceEndsTheRun) {
  const Vocabulary v = tiny_vocab();
  Engine e(v);
  CompileOptions bounded;
  bounded.max_whitespace = 2;
  auto g = e.compile(SpecKind::kJsonObject, "", bounded);
  Matcher m(g);
  ASSERT_TRUE(m.accept(id_of(v, "{")));
  EXPECT_TRUE(m.accept(id_of(v, " ")));
  EXPECT_TRUE(m.accept(id_of(v, " ")));
  EXPECT_FALSE(m.accept(id_of(v, " ")));  // a third space in a row is refused
}

TEST(GrammarEngine, StructuralTagFreeTextUntilTheTriggerThenTheTag) {
  const Vocabulary v = tiny_vocab();
  Engine e(v);
  auto g = e.compile(SpecKind::kStructuralTag, R"({"type": "structural_tag", "format": {
      "type": "triggered_tags", "triggers": ["b"], "tags": [{"type": "tag", "begin": "b{",
      "content": {"type": "json_schema", "json_schema": {"type": "integer"}}, "end": "}"}],
      "at_least_one": false, "stop_after_first": false}})",
                     {});
  Matcher m(g);
  EXPECT_TRUE(m.can_end());              // no tag needed
  ASSERT_TRUE(m.accept(id_of(v, "a")));  // free text
  ASSERT_TRUE(m.accept(id_of(v, "b")));  // the trigger: the tag's begin must follow
  EXPECT_FALSE(m.accept(id_of(v, "a")));
  ASSERT_TRUE(m.accept(id_of(v, "{")));
  EXPECT_FALSE(m.accept(id_of(v, "a")));  // the schema: an integer
  ASSERT_TRUE(m.accept(id_of(v, "1")));
  ASSERT_TRUE(m.accept(id_of(v, "}")));
  EXPECT_TRUE(m.can_end());
  // its schemas are held to the subset, refused by pointer
  try {
    e.compile(SpecKind::kStructuralTag, R"({"type": "structural_tag", "format": {"type": "tag",
        "begin": "b", "content": {"type": "json_schema", "json_schema": {"type": "number",
        "multipleOf": 2}}, "end": "}"}})",
              {});
    ADD_FAILURE() << "multipleOf inside a structural tag passed";
  } catch (const CompileError& err) {
    EXPECT_NE(std::string(err.what()).find("/format/content/json_schema/multipleOf"),
              std::string::npos)
        << err.what();
  }
}

TEST(GrammarEngine, CacheHitsAndRefusals) {
  Engine e(tiny_vocab());
  auto a = e.compile(SpecKind::kJsonSchema, R"({"type": "integer"})", {});
  auto b = e.compile(SpecKind::kJsonSchema, "{ \"type\" :\n \"integer\" }", {});
  EXPECT_EQ(a.get(), b.get());  // the same spec up to whitespace: one compilation
  EXPECT_EQ(e.stats().compiles, 1u);
  EXPECT_EQ(e.stats().cache_hits, 1u);
  try {
    e.compile(SpecKind::kJsonSchema, R"({"properties": {"x": {"not": {}}}})", {});
    FAIL() << "not a refusal";
  } catch (const CompileError& err) {
    EXPECT_EQ(err.pointer(), "/properties/x/not");
  }
  EXPECT_THROW(e.compile(SpecKind::kJsonSchema, "{", {}), CompileError);
  EXPECT_THROW(e.compile(SpecKind::kRegex, "(", {}), CompileError);
  EXPECT_THROW(e.compile(SpecKind::kChoice, "[]", {}), CompileError);
  EXPECT_THROW(e.compile(SpecKind::kEbnf, "root ::= undefined_rule", {}), CompileError);
  // unsatisfiable: nothing in this vocabulary can spell a string of 3 "z"
  EXPECT_THROW(e.compile(SpecKind::kRegex, "zzz", {}), CompileError);
  CompileOptions small;
  small.max_spec_bytes = 4;
  EXPECT_THROW(e.compile(SpecKind::kRegex, "aaaaaaaa", small), CompileError);
  EXPECT_EQ(e.stats().refused, 7u);
}

// XGrammar's own errors reach the client without its log prefix ("[01:02:03]
// /root/.cache/.../regex_converter.cc:94: ") and trailing newline, which named the server's paths.
TEST(GrammarEngine, EngineRefusalsCarryNoLogPrefixOrSourcePath) {
  Engine e(tiny_vocab());
  const std::vector<std::pair<SpecKind, std::string>> bad = {
      {SpecKind::kRegex, "("},
      {SpecKind::kEbnf, "root ::= "},
      {SpecKind::kJsonSchema, R"({"$ref": "#/nope"})"},
  };
  for (const auto& [kind, spec] : bad) {
    try {
      e.compile(kind, spec, {});
      FAIL() << spec << ": not refused";
    } catch (const CompileError& err) {
      const std::string what = err.what();
      EXPECT_EQ(what.rfind("the grammar engine refused it: ", 0), 0u) << what;
      EXPECT_EQ(what.find(".cc:"), std::string::npos) << what;
      EXPECT_EQ(what.find("] "), std::string::npos) << what;
      EXPECT_NE(what.back(), '\n') << what;
      EXPECT_GT(what.size(), std::string("the grammar engine refused it: ").size() + 8) << what;
    }
  }
}

TEST(GrammarEngine, CompileTimeLimitRefusesAndTheEngineStaysUsable) {
  Engine e(tiny_vocab());
  CompileOptions quick;
  quick.timeout_ms = 1;
  // 50,000 choices of 24 bytes: far more than 1 ms to parse and compile.
  std::string big = "[";
  for (int i = 0; i < 50000; ++i) {
    big += (i > 0 ? ",\"" : "\"") + std::string(18, 'a') + std::to_string(100000 + i) + "\"";
  }
  big += "]";
  EXPECT_THROW(e.compile(SpecKind::kChoice, big, quick), CompileError);
  EXPECT_TRUE(e.wait_idle(120000));
  quick.timeout_ms = 0;
  auto g = e.compile(SpecKind::kChoice, R"(["ab"])", quick);
  Matcher m(g);
  EXPECT_TRUE(m.accept(16));  // "ab"
}

}  // namespace

namespace {

// ids: 0 "<eos>" (control, stop), then the 256 single bytes (byte b at id b + 1).
Vocabulary byte_vocab() {
  Vocabulary v;
  v.bytes = {"<eos>"};
  v.types = {3};
  for (int b = 0; b < 256; ++b) {
    v.bytes.emplace_back(1, static_cast<char>(b));
    v.types.push_back(1);
  }
  v.stop_ids = {0};
  return v;
}

/// Whether the matcher takes `text` byte by byte and can end after it.
bool takes_bytes(const std::shared_ptr<const plinth::grammar::Compiled>& g,
                 const std::string& text) {
  Matcher m(g);
  for (unsigned char c : text) {
    if (!m.accept(static_cast<int32_t>(c) + 1)) return false;
  }
  return m.can_end();
}

TEST(GrammarEngine, LengthBoundedStringsAreJsonStrings) {
  // XGrammar writes a string with minLength / maxLength as 1..n characters other than '"', '\',
  // CR and LF: a raw tab or other control character would pass, which no JSON text holds
  // (RFC 8259 section 7). The rewrite gives it a pattern instead, whose JSON string excludes them.
  Engine e(byte_vocab());
  for (const char* schema :
       {R"({"type": "string", "minLength": 1, "maxLength": 4})",
        R"({"type": "string", "maxLength": 4})", R"({"type": "string", "minLength": 2})"}) {
    auto g = e.compile(SpecKind::kJsonSchema, schema, {});
    EXPECT_TRUE(takes_bytes(g, "\"ab\"")) << schema;
    EXPECT_TRUE(takes_bytes(g, "\"\xc3\xa9\xc3\xa9\"")) << schema;  // two code points
    EXPECT_FALSE(takes_bytes(g, "\"a\tb\"")) << schema;
    EXPECT_FALSE(takes_bytes(g, std::string("\"a\x01", 3) + "b\"")) << schema;
  }
  auto g =
      e.compile(SpecKind::kJsonSchema, R"({"type": "string", "minLength": 1, "maxLength": 4})", {});
  EXPECT_FALSE(takes_bytes(g, "\"\""));
  EXPECT_TRUE(takes_bytes(g, "\"abcd\""));
  EXPECT_FALSE(takes_bytes(g, "\"abcde\""));
}

}  // namespace
