// The tool-call grammars (host/server/tool_envelope.cpp) compiled by the grammar plugin's engine
// (XGrammar) over a byte vocabulary (one token per byte, plus a stop token): a reply in each
// family's format is accepted byte by byte and can end there, replies the format or the
// parameters' schema forbid are refused, and the parser reads the accepted replies' calls as
// nlohmann/json reads them. Families: Llama 3.x's {"name", "parameters"} call, Hermes
// (Qwen2.5), and response_format beside tools (the envelope's "response" and Hermes' JSON reply).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "grammar_engine.hpp"
#include "server/tool_call_parser.hpp"
#include "server/tool_envelope.hpp"
#include "server/tool_request.hpp"

namespace plinth::server {
namespace {

using nlohmann::json;
using nlohmann::ordered_json;

constexpr int32_t kStop = 256;

grammar::Vocabulary byte_vocab() {
  grammar::Vocabulary v;
  for (int b = 0; b < 256; ++b) {
    v.bytes.emplace_back(1, static_cast<char>(b));
    v.types.push_back(1);
  }
  v.bytes.emplace_back("<eos>");
  v.types.push_back(3);
  v.stop_ids = {kStop};
  return v;
}

grammar::Engine& engine() {
  static grammar::Engine e(byte_vocab());
  return e;
}

// Whether `g` accepts `text` byte by byte and can end (the stop token is then accepted).
bool accepts(const GrammarSpec& g, const std::string& text) {
  grammar::CompileOptions o;
  o.strict = g.strict;
  o.compact = g.compact;
  grammar::Matcher m(engine().compile(static_cast<grammar::SpecKind>(g.kind), g.spec, o));
  for (const char c : text) {
    if (!m.accept(static_cast<unsigned char>(c))) return false;
  }
  return m.accept(kStop);
}

const std::string kTools = R"("tools": [
  {"type": "function", "function": {"name": "get_weather", "parameters": {"type": "object",
    "properties": {"city": {"type": "string"}, "unit": {"enum": ["c", "f"]}},
    "required": ["city", "unit"], "additionalProperties": false}}},
  {"type": "function", "function": {"name": "now", "parameters": {"type": "object",
    "properties": {}, "additionalProperties": false}}}])";

ToolRequest request(const std::string& rest, ToolFormat format) {
  const std::string raw = "{" + kTools + rest + "}";
  ToolRequest r = *parse_tool_request(json::parse(raw), raw);
  r.format = format;
  return r;
}

ToolCallResult parse(const ToolRequest& r, const std::string& text, size_t piece) {
  auto parser = make_tool_call_parser(r);
  std::vector<ToolEvent> events;
  for (size_t at = 0; at < text.size(); at += piece) parser->feed(text.substr(at, piece), events);
  parser->finish(events);
  ToolCallResult out;
  for (const ToolEvent& e : events) out.apply(e);
  return out;
}

const std::string kLlamaCall =
    R"({"name": "get_weather", "parameters": {"city": "Paris", "unit": "c"}})";

TEST(ToolGrammars, Llama3RequiredIsOneCallOfAKnownFunction) {
  const ToolRequest r = request(R"(, "tool_choice": "required")", ToolFormat::kLlama3Json);
  const GrammarSpec g = tool_call_grammar(r);
  EXPECT_TRUE(accepts(g, kLlamaCall));
  EXPECT_TRUE(accepts(g, R"({"name": "now", "parameters": {}})"));
  EXPECT_FALSE(accepts(g, "Sure: " + kLlamaCall));                    // no free text
  EXPECT_FALSE(accepts(g, R"({"name": "nope", "parameters": {}})"));  // unknown function
  EXPECT_FALSE(accepts(g, R"({"name": "get_weather", "parameters": {"city": "Paris"}})"));
  EXPECT_FALSE(accepts(g, R"({"name": "get_weather", "arguments": {"city": "P", "unit": "c"}})"));
  EXPECT_FALSE(accepts(g, kLlamaCall + R"({"name": "now", "parameters": {}})"));  // one call
  EXPECT_FALSE(accepts(g, ""));
  // the parser: the call as nlohmann reads it, whole and byte by byte
  for (size_t piece : {kLlamaCall.size(), size_t{1}, size_t{3}}) {
    const ToolCallResult c = parse(r, kLlamaCall, piece);
    ASSERT_EQ(c.calls.size(), 1u);
    EXPECT_EQ(c.calls[0].name, "get_weather");
    EXPECT_EQ(json::parse(c.calls[0].arguments), json::parse(kLlamaCall)["parameters"]);
    EXPECT_FALSE(c.has_content);
  }
}

TEST(ToolGrammars, Llama3NamedAndAuto) {
  const ToolRequest named =
      request(R"(, "tool_choice": {"type": "function", "function": {"name": "now"}})",
              ToolFormat::kLlama3Json);
  EXPECT_TRUE(accepts(tool_call_grammar(named), R"({"name": "now", "parameters": {}})"));
  EXPECT_FALSE(accepts(tool_call_grammar(named), kLlamaCall));
  const ToolRequest autos = request("", ToolFormat::kLlama3Json);
  const GrammarSpec g = tool_call_grammar(autos);
  EXPECT_TRUE(accepts(g, "It is sunny."));
  EXPECT_TRUE(accepts(g, ""));
  EXPECT_TRUE(accepts(g, kLlamaCall));
  EXPECT_TRUE(accepts(g, "Checking. " + kLlamaCall));
  EXPECT_FALSE(accepts(g, R"({"name": "get_weather", "parameters": {"town": "Paris"}})"));
  EXPECT_FALSE(accepts(g, kLlamaCall + " done"));  // the call ends the reply
  for (size_t piece : {size_t{1}, size_t{2}, size_t{100}}) {
    const std::string free = "It is {sunny} \"x\" {\"name\"} {\"name\": 1}.";
    EXPECT_TRUE(accepts(g, free));  // not the trigger: text
    const ToolCallResult text = parse(autos, free, piece);
    EXPECT_EQ(text.content, free);
    EXPECT_TRUE(text.calls.empty());
    const ToolCallResult both = parse(autos, "Checking. " + kLlamaCall + "\n", piece);
    EXPECT_EQ(both.content, "Checking. ");
    ASSERT_EQ(both.calls.size(), 1u);
    EXPECT_EQ(json::parse(both.calls[0].arguments), json::parse(kLlamaCall)["parameters"]);
  }
}

TEST(ToolGrammars, MistralNemoCallListAfterTheMarker) {
  // The prompt ends with [TOOL_CALLS]; the reply is the list of calls, each with a 9-character id.
  const std::string two =
      R"([{"name": "get_weather", "arguments": {"city": "Paris", "unit": "f"}, "id": "a1B2c3D4e"},)"
      R"( {"name": "now", "arguments": {}, "id": "Zz9Yy8Xx7"}])";
  const ToolRequest parallel = request(R"(, "tool_choice": "required")", ToolFormat::kMistralNemo);
  const GrammarSpec g = tool_call_grammar(parallel);
  EXPECT_TRUE(accepts(g, two));
  EXPECT_FALSE(accepts(g, "[]"));                                                    // one at least
  EXPECT_FALSE(accepts(g, R"([{"name": "now", "arguments": {}, "id": "short"}])"));  // 9 chars
  EXPECT_FALSE(accepts(g, R"([{"name": "now", "arguments": {}}])"));                 // an id
  EXPECT_FALSE(accepts(g, R"([{"name": "now", "arguments": {"x": 1}, "id": "a1B2c3D4e"}])"));
  EXPECT_FALSE(accepts(g, "Sure. " + two));
  for (size_t piece : {two.size(), size_t{1}, size_t{5}}) {
    const ToolCallResult c = parse(parallel, two, piece);
    EXPECT_FALSE(c.has_content);
    ASSERT_EQ(c.calls.size(), 2u);
    const json j = json::parse(two);
    for (size_t i = 0; i < 2; ++i) {
      EXPECT_EQ(c.calls[i].name, j[i]["name"]);
      EXPECT_EQ(json::parse(c.calls[i].arguments), j[i]["arguments"]);
    }
  }
  const ToolRequest one = request(R"(, "tool_choice": "required", "parallel_tool_calls": false)",
                                  ToolFormat::kMistralNemo);
  EXPECT_FALSE(accepts(tool_call_grammar(one), two));
  const ToolRequest named =
      request(R"(, "tool_choice": {"type": "function", "function": {"name": "now"}})",
              ToolFormat::kMistralNemo);
  EXPECT_TRUE(accepts(tool_call_grammar(named),
                      R"([{"name": "now", "arguments": {}, "id": "a1B2c3D4e"}])"));
  EXPECT_FALSE(accepts(
      tool_call_grammar(named),
      R"([{"name": "get_weather", "arguments": {"city": "P", "unit": "c"}, "id": "a1B2c3D4e"}])"));
}

TEST(ToolGrammars, ResponseFormatBesideToolsInTheEnvelope) {
  ToolRequest r = request("", ToolFormat::kEnvelope);
  GrammarSpec person;
  person.kind = PLINTH_GRAMMAR_JSON_SCHEMA;
  person.spec = R"({"type": "object", "properties": {"name": {"type": "string"}},
                    "required": ["name"]})";
  person.strict = true;  // closes the object, as OpenAI's strict does
  r.response_schema = response_schema_of(person);
  EXPECT_EQ(r.response_schema["additionalProperties"], false);
  const GrammarSpec g = tool_call_grammar(r);
  const std::string reply = R"({"response": {"name": "Ada"}})";
  EXPECT_TRUE(accepts(g, reply));
  EXPECT_TRUE(accepts(g, R"({"tool_calls": [{"name": "now", "arguments": {}}]})"));
  EXPECT_FALSE(accepts(g, R"({"response": "Ada"})"));
  EXPECT_FALSE(accepts(g, R"({"response": {"name": "Ada", "age": 3}})"));
  for (size_t piece : {size_t{1}, size_t{100}}) {
    const ToolCallResult c = parse(r, reply, piece);
    EXPECT_TRUE(c.calls.empty());
    EXPECT_EQ(json::parse(c.content), json({{"name", "Ada"}}));
  }
  // a string schema: the content is the JSON string, not its decoded text
  GrammarSpec str;
  str.kind = PLINTH_GRAMMAR_JSON_SCHEMA;
  str.spec = R"({"type": "string"})";
  r.response_schema = response_schema_of(str);
  EXPECT_TRUE(accepts(tool_call_grammar(r), R"({"response": "a \"b\""})"));
  EXPECT_EQ(parse(r, R"({"response": "a \"b\""})", 1).content, R"("a \"b\"")");
  // json_object: any object
  GrammarSpec obj;
  obj.kind = PLINTH_GRAMMAR_JSON_OBJECT;
  r.response_schema = response_schema_of(obj);
  EXPECT_TRUE(accepts(tool_call_grammar(r), R"({"response": {"x": [1]}})"));
  EXPECT_FALSE(accepts(tool_call_grammar(r), R"({"response": [1]})"));
}

TEST(ToolGrammars, ResponseFormatBesideToolsInHermes) {
  ToolRequest r = request("", ToolFormat::kHermes);
  GrammarSpec person;
  person.kind = PLINTH_GRAMMAR_JSON_SCHEMA;
  person.spec = R"({"type": "object", "properties": {"name": {"type": "string"}},
                    "required": ["name"], "additionalProperties": false})";
  r.response_schema = response_schema_of(person);
  const GrammarSpec g = tool_call_grammar(r);
  const std::string call = "<tool_call>\n{\"name\": \"now\", \"arguments\": {}}\n</tool_call>";
  EXPECT_TRUE(accepts(g, R"({"name": "Ada"})"));
  EXPECT_TRUE(accepts(g, call));
  EXPECT_FALSE(accepts(g, "Ada"));  // no free text: the reply follows the schema
  EXPECT_FALSE(accepts(g, R"({"name": 1})"));
  EXPECT_FALSE(accepts(g, R"({"name": "Ada"})" + call));
  const ToolCallResult c = parse(r, R"({"name": "Ada"})", 1);
  EXPECT_EQ(c.content, R"({"name": "Ada"})");
  EXPECT_TRUE(c.calls.empty());
  EXPECT_EQ(parse(r, call, 1).calls.size(), 1u);
}

}  // namespace
}  // namespace plinth::server
