// Tool calling without a model (host/server/tool_*.cpp). Expected values come from nlohmann/json
// reading the same text (an independent JSON parser), not from the code under test.
#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "server/api_error.hpp"
#include "server/tool_call_parser.hpp"
#include "server/tool_envelope.hpp"
#include "server/tool_request.hpp"

namespace plinth::server {
namespace {

using nlohmann::json;
using nlohmann::ordered_json;

// The reply fed in pieces cut at `cuts`; the events folded, and each call's argument fragments
// concatenated as a streaming client does.
ToolCallResult feed_in_pieces(std::string_view text, const std::vector<size_t>& cuts) {
  auto parser = make_envelope_parser();
  ToolCallResult r;
  size_t from = 0;
  std::vector<ToolEvent> events;
  for (size_t cut : cuts) {
    parser->feed(text.substr(from, cut - from), events);
    from = cut;
  }
  parser->feed(text.substr(from), events);
  for (const ToolEvent& e : events) r.apply(e);
  return r;
}

void expect_same(const ToolCallResult& a, const ToolCallResult& b) {
  EXPECT_EQ(a.content, b.content);
  EXPECT_EQ(a.has_content, b.has_content);
  ASSERT_EQ(a.calls.size(), b.calls.size());
  for (size_t i = 0; i < a.calls.size(); ++i) {
    EXPECT_EQ(a.calls[i].name, b.calls[i].name);
    EXPECT_EQ(a.calls[i].arguments, b.calls[i].arguments);
  }
}

// The calls of an envelope as nlohmann reads them: (name, arguments value).
void expect_calls_match_json(const ToolCallResult& r, const std::string& text) {
  const json j = json::parse(text);
  const json& calls = j.at("tool_calls");
  ASSERT_EQ(r.calls.size(), calls.size());
  for (size_t i = 0; i < calls.size(); ++i) {
    EXPECT_EQ(r.calls[i].name, calls[i].at("name").get<std::string>());
    EXPECT_EQ(json::parse(r.calls[i].arguments), calls[i].at("arguments"));
  }
  EXPECT_FALSE(r.has_content);
}

const std::string kTwoCalls =
    "{ \"tool_calls\" : [\n  {\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris, "
    "\\\"FR\\\"\", \"days\": [1, 2.5e1, -3], \"opts\": {\"unit\": null, \"deep\": [{}, []]}}},"
    " {\"name\":\"find\",\"arguments\":{\"q\":\"caf\\u00e9 \\ud83d\\ude00 "
    "{[,:]}\",\"n\":true}}\n]}";

TEST(ToolCallParser, EnvelopeWholeAndByteByByteAgree) {
  const ToolCallResult whole = feed_in_pieces(kTwoCalls, {});
  expect_calls_match_json(whole, kTwoCalls);
  std::vector<size_t> every;
  for (size_t i = 1; i < kTwoCalls.size(); ++i) every.push_back(i);
  expect_same(feed_in_pieces(kTwoCalls, every), whole);
  std::mt19937 rng(1);
  for (int trial = 0; trial < 50; ++trial) {
    std::vector<size_t> cuts;
    for (size_t i = 1; i < kTwoCalls.size(); ++i) {
      if (rng() % 5 == 0) cuts.push_back(i);
    }
    expect_same(feed_in_pieces(kTwoCalls, cuts), whole);
  }
}

TEST(ToolCallParser, ArgumentsAreTheValueWithoutOuterWhitespace) {
  const ToolCallResult r = feed_in_pieces(kTwoCalls, {});
  ASSERT_EQ(r.calls.size(), 2u);
  EXPECT_EQ(r.calls[0].arguments,
            "{\"city\":\"Paris, \\\"FR\\\"\",\"days\":[1,2.5e1,-3],\"opts\":{\"unit\":null,"
            "\"deep\":[{},[]]}}");
  EXPECT_EQ(r.calls[1].arguments, "{\"q\":\"caf\\u00e9 \\ud83d\\ude00 {[,:]}\",\"n\":true}");
}

TEST(ToolCallParser, EventsComeInStreamOrder) {
  auto parser = make_envelope_parser();
  std::vector<ToolEvent> events;
  parser->feed("{\"tool_calls\": [{\"name\": \"f\", \"argu", events);
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0].kind, ToolEvent::Kind::kCallStart);
  EXPECT_EQ(events[0].text, "f");
  events.clear();
  parser->feed("ments\": {\"a\": 1", events);
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0].kind, ToolEvent::Kind::kArguments);
  EXPECT_EQ(events[0].text, "{\"a\":1");
  events.clear();
  parser->feed("}}]}", events);
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0].text, "}");
}

TEST(ToolCallParser, ResponseIsDecodedContent) {
  // \u escapes of every UTF-8 length (1 to 4 bytes, the last a surrogate pair), against nlohmann.
  const std::string text =
      "{\"response\": \"Hello \\\"you\\\"\\n\\u0041\\u00e9\\u20ac\\ud83d\\ude00 \\\\ /\"}";
  const std::string expected = json::parse(text).at("response").get<std::string>();
  const ToolCallResult whole = feed_in_pieces(text, {});
  EXPECT_TRUE(whole.has_content);
  EXPECT_EQ(whole.content, expected);
  EXPECT_TRUE(whole.calls.empty());
  std::vector<size_t> every;
  for (size_t i = 1; i < text.size(); ++i) every.push_back(i);
  expect_same(feed_in_pieces(text, every), whole);
  EXPECT_TRUE(feed_in_pieces("{\"response\": \"\"}", {}).has_content);
}

TEST(ToolCallParser, ACutReplyYieldsWhatItHolds) {
  const ToolCallResult r =
      feed_in_pieces("{\"tool_calls\": [{\"name\": \"f\", \"arguments\": {\"a\": [1, ", {});
  ASSERT_EQ(r.calls.size(), 1u);
  EXPECT_EQ(r.calls[0].name, "f");
  EXPECT_EQ(r.calls[0].arguments, "{\"a\":[1,");
}

ToolCallResult hermes_in_pieces(std::string_view text, size_t piece) {
  auto parser = make_hermes_parser();
  std::vector<ToolEvent> events;
  for (size_t at = 0; at < text.size(); at += piece) parser->feed(text.substr(at, piece), events);
  parser->finish(events);
  ToolCallResult r;
  for (const ToolEvent& e : events) r.apply(e);
  return r;
}

TEST(ToolCallParser, HermesCallsAfterText) {
  const std::string text =
      "Let me check <that>.\n<tool_call>\n{\"name\": \"get_weather\", \"arguments\": "
      "{\"city\": \"Paris </tool_call>\"}}\n</tool_call>\n<tool_call>\n{\"name\": \"now\", "
      "\"arguments\": {}}\n</tool_call>\n";
  const ToolCallResult whole = hermes_in_pieces(text, text.size());
  EXPECT_EQ(whole.content, "Let me check <that>.\n");
  ASSERT_EQ(whole.calls.size(), 2u);
  EXPECT_EQ(whole.calls[0].name, "get_weather");
  EXPECT_EQ(json::parse(whole.calls[0].arguments), json({{"city", "Paris </tool_call>"}}));
  EXPECT_EQ(whole.calls[1].name, "now");
  EXPECT_EQ(whole.calls[1].arguments, "{}");
  for (size_t piece : {1, 2, 3, 7}) expect_same(hermes_in_pieces(text, piece), whole);
}

TEST(ToolCallParser, HermesTextOnlyAndHeldMarkers) {
  for (const std::string text : {"plain answer", "a <tool b", "ends with <tool_ca", ""}) {
    for (size_t piece : {1, 3, 100}) {
      const ToolCallResult r = hermes_in_pieces(text, piece);
      EXPECT_EQ(r.content, text) << piece;
      EXPECT_TRUE(r.calls.empty());
    }
  }
  // text after a call keeps its inner spaces; the whitespace right after the call is dropped
  const std::string after =
      "<tool_call>\n{\"name\": \"f\", \"arguments\": {}}\n</tool_call>\n\nDone, see above.";
  for (size_t piece : {1, 4, 100}) {
    const ToolCallResult r = hermes_in_pieces(after, piece);
    EXPECT_EQ(r.content, "Done, see above.") << piece;
    ASSERT_EQ(r.calls.size(), 1u);
  }
}

TEST(ToolCallParser, Llama3CallAfterTextAnyCuts) {
  // The call's strings hold the marker and braces; text before it is content; whitespace after
  // it dropped. Every random split gives the same result as nlohmann's reading.
  const std::string call =
      "{\"name\": \"find\", \"parameters\": {\"q\": \"{\\\"name\\\": x} caf\\u00e9\", "
      "\"n\": [1, {\"name\": 2}]}}";
  const std::string text = "I'll look it up {now}. " + call + "\n";
  std::mt19937 rng(7);
  for (int round = 0; round < 200; ++round) {
    auto parser = make_llama3_parser();
    std::vector<ToolEvent> events;
    size_t at = 0;
    while (at < text.size()) {
      const size_t n = std::uniform_int_distribution<size_t>(1, 9)(rng);
      parser->feed(std::string_view(text).substr(at, n), events);
      at += n;
    }
    parser->finish(events);
    ToolCallResult r;
    for (const ToolEvent& e : events) r.apply(e);
    EXPECT_EQ(r.content, "I'll look it up {now}. ");
    ASSERT_EQ(r.calls.size(), 1u);
    EXPECT_EQ(r.calls[0].name, "find");
    EXPECT_EQ(json::parse(r.calls[0].arguments), json::parse(call)["parameters"]);
  }
}

// Mistral Nemo under tool_choice auto: `text` fed in random pieces through feed_reply, the
// trigger token (a control token, no text) sampled at byte `trigger` (npos: never).
ToolCallResult mistral_auto(const std::string& text, size_t trigger, std::mt19937& rng) {
  auto parser = make_mistral_nemo_parser(/*triggered=*/true);
  std::vector<ToolEvent> events;
  size_t at = 0;
  while (at < text.size()) {
    const size_t n = std::min(std::uniform_int_distribution<size_t>(1, 9)(rng), text.size() - at);
    std::optional<size_t> offset;
    if (trigger >= at && trigger <= at + n && trigger != std::string::npos) {
      offset = trigger - at;
      trigger = std::string::npos;  // one trigger per reply
    }
    feed_reply(*parser, std::string_view(text).substr(at, n), offset, at + n == text.size(),
               events);
    at += n;
  }
  ToolCallResult r;
  for (const ToolEvent& e : events) r.apply(e);
  return r;
}

TEST(ToolCallParser, MistralNemoAutoContentUntilTheTriggerToken) {
  // The calls start where the engine reports the trigger token, never where text looks like
  // the marker: "[TOOL_CALLS]" and a JSON list written as text stay content.
  const std::string list =
      "[{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris [TOOL_CALLS]\"}, "
      "\"id\": \"abcDEF123\"}, {\"name\": \"get_time\", \"arguments\": {}, \"id\": "
      "\"x1x2x3x4x\"}]";
  const std::string before = "Sure. [TOOL_CALLS][{\"name\": \"fake\"}] is text here.";
  const std::string text = before + "\n " + list;
  const json expected = json::parse(list);
  std::mt19937 rng(11);
  for (int round = 0; round < 200; ++round) {
    const ToolCallResult r = mistral_auto(text, before.size() + 2, rng);
    EXPECT_EQ(r.content, before) << "whitespace before the trigger dropped";
    ASSERT_EQ(r.calls.size(), 2u);
    for (size_t i = 0; i < 2; ++i) {
      EXPECT_EQ(r.calls[i].name, expected[i].at("name").get<std::string>());
      EXPECT_EQ(json::parse(r.calls[i].arguments), expected[i].at("arguments"));
    }
    const ToolCallResult text_only = mistral_auto(text, std::string::npos, rng);
    EXPECT_EQ(text_only.content, text) << "no trigger token: all of it is content";
    EXPECT_TRUE(text_only.calls.empty());
    const ToolCallResult calls_only = mistral_auto(" \n" + list, 2, rng);
    EXPECT_FALSE(calls_only.has_content) << "only whitespace before the trigger: content null";
    EXPECT_EQ(calls_only.calls.size(), 2u);
  }
}

TEST(ToolRequest, MistralCallIdsAreNineLettersAndDigits) {
  EXPECT_EQ(mistral_call_id("a1B2c3D4e"), "a1B2c3D4e");  // already one: kept
  for (const std::string id : {"call_abc", "toolu_01XyZ", "", "a1B2c3D4-", "a1B2c3D4e0"}) {
    const std::string m = mistral_call_id(id);
    EXPECT_EQ(m.size(), 9u) << id;
    EXPECT_TRUE(std::all_of(m.begin(), m.end(), [](char c) { return std::isalnum(c) != 0; })) << id;
    EXPECT_EQ(mistral_call_id(id), m);  // the same for the same id
  }
  EXPECT_NE(mistral_call_id("call_1"), mistral_call_id("call_2"));
}

// --- the request fields ---

int status_of(const json& body, std::string* param = nullptr) {
  try {
    parse_tool_request(body, body.dump());
  } catch (const ApiError& e) {
    if (param != nullptr) *param = e.param();
    return e.status();
  }
  return 200;
}

json weather_tool() {
  json params = {{"type", "object"},
                 {"properties", {{"city", {{"type", "string"}}}}},
                 {"required", json::array({"city"})}};
  json fn = {{"name", "get_weather"}, {"description", "Weather of a city"}, {"parameters", params}};
  return {{"type", "function"}, {"function", fn}};
}

TEST(ToolRequest, ReadsToolsAndChoices) {
  const std::string raw =
      R"({"tools": [{"type": "function", "function": {"name": "f", "parameters": {"type": "object",
          "properties": {"z": {"type": "string"}, "a": {"type": "integer"}}}, "strict": true}}],
          "tool_choice": {"type": "function", "function": {"name": "f"}},
          "parallel_tool_calls": false})";
  const auto r = parse_tool_request(json::parse(raw), raw);
  ASSERT_TRUE(r.has_value());
  ASSERT_EQ(r->tools.size(), 1u);
  EXPECT_EQ(r->choice, ToolChoice::kNamed);
  EXPECT_EQ(r->named, "f");
  EXPECT_FALSE(r->parallel);
  EXPECT_TRUE(r->tools[0].strict);
  // members in the request's order (z before a), which json (sorted) would lose
  EXPECT_EQ(r->tools[0].parameters["properties"].begin().key(), "z");
  const json only_tools = {{"tools", {weather_tool()}}};
  EXPECT_EQ(parse_tool_request(only_tools, only_tools.dump())->choice, ToolChoice::kAuto);
  EXPECT_FALSE(parse_tool_request(json::object(), "{}").has_value());
  const json none = {{"tool_choice", "none"}};
  EXPECT_FALSE(parse_tool_request(none, none.dump())->calls_possible());
}

TEST(ToolRequest, BadInputNamesTheField) {
  struct Case {
    json body;
    int status;
    std::string param;
  };
  json dup = {{"tools", {weather_tool(), weather_tool()}}};
  json bad_name = {{"tools", {weather_tool()}}};
  bad_name["tools"][0]["function"]["name"] = "get weather";
  json bad_params = {{"tools", {weather_tool()}}};
  bad_params["tools"][0]["function"]["parameters"] = {{"type", "string"}};
  json params_not_object = {{"tools", {weather_tool()}}};
  params_not_object["tools"][0]["function"]["parameters"] = "x";
  json not_function = {{"tools", {weather_tool()}}};
  not_function["tools"][0]["type"] = "retrieval";
  const std::vector<Case> cases = {
      {{{"tool_choice", "required"}}, 400, "tool_choice"},
      {{{"tools", {weather_tool()}},
        {"tool_choice", {{"type", "function"}, {"function", {{"name", "nope"}}}}}},
       400,
       "tool_choice.function.name"},
      {{{"tools", {weather_tool()}}, {"tool_choice", "sometimes"}}, 400, "tool_choice"},
      {{{"tools", {weather_tool()}}, {"tool_choice", 3}}, 422, "tool_choice"},
      {{{"tools", "f"}}, 422, "tools"},
      {dup, 400, "tools[1].function.name"},
      {bad_name, 400, "tools[0].function.name"},
      {bad_params, 400, "tools[0].function.parameters.type"},
      {params_not_object, 422, "tools[0].function.parameters"},
      {not_function, 400, "tools[0].type"},
      {{{"tools", {weather_tool()}}, {"parallel_tool_calls", "yes"}}, 422, "parallel_tool_calls"},
  };
  for (const Case& c : cases) {
    std::string param;
    EXPECT_EQ(status_of(c.body, &param), c.status) << c.body.dump();
    EXPECT_EQ(param, c.param) << c.body.dump();
  }
}

TEST(ToolRequest, HistoryToolCallsAndResults) {
  ChatMessage a{"assistant", ""};
  parse_message_tools(json{{"tool_calls",
                            {{{"id", "call_1"},
                              {"type", "function"},
                              {"function", {{"name", "f"}, {"arguments", "{\"a\": 1}"}}}}}}},
                      "messages[1]", a);
  ASSERT_EQ(a.tool_calls.size(), 1u);
  EXPECT_EQ(a.tool_calls[0].arguments, "{\"a\": 1}");
  ChatMessage t{"tool", "sunny"};
  parse_message_tools(json{{"tool_call_id", "call_1"}}, "messages[2]", t);
  EXPECT_EQ(t.tool_call_id, "call_1");
  std::vector<ChatMessage> history = {{"user", "hi"}, a, t};
  EXPECT_NO_THROW(check_tool_history(history));
  history[2].tool_call_id = "call_9";
  try {
    check_tool_history(history);
    ADD_FAILURE() << "an unanswered id passed";
  } catch (const ApiError& e) {
    EXPECT_EQ(e.param(), "messages[2].tool_call_id");
  }
  ChatMessage bad{"assistant", ""};
  try {
    parse_message_tools(json{{"tool_calls", {{{"function", {{"name", "f"}, {"arguments", "{"}}}}}}},
                        "messages[1]", bad);
    ADD_FAILURE() << "arguments that are not JSON passed";
  } catch (const ApiError& e) {
    EXPECT_EQ(e.param(), "messages[1].tool_calls[0].function.arguments");
  }
  ChatMessage no_id{"tool", "x"};
  EXPECT_THROW(parse_message_tools(json::object(), "messages[2]", no_id), ApiError);
}

// --- the envelope ---

ToolRequest request_of(const std::string& raw) {
  return *parse_tool_request(json::parse(raw), raw);
}

TEST(ToolEnvelope, SchemaPerChoice) {
  const std::string tools =
      R"("tools": [{"type": "function", "function": {"name": "a", "parameters": {"type": "object",
          "properties": {"x": {"type": "integer"}}}}},
        {"type": "function", "function": {"name": "b"}}])";
  const json required = json::parse(
      envelope_grammar(request_of("{" + tools + R"(, "tool_choice": "required"})")).spec);
  EXPECT_EQ(required["properties"]["tool_calls"]["minItems"], 1);
  EXPECT_FALSE(required["properties"]["tool_calls"].contains("maxItems"));
  EXPECT_EQ(required["required"], json::array({"tool_calls"}));
  EXPECT_EQ(required["properties"]["tool_calls"]["items"]["anyOf"].size(), 2u);
  const json& call_a = required["properties"]["tool_calls"]["items"]["anyOf"][0];
  EXPECT_EQ(call_a["properties"]["name"]["const"], "a");
  EXPECT_EQ(call_a["properties"]["arguments"]["properties"]["x"]["type"], "integer");
  EXPECT_EQ(call_a["additionalProperties"], false);

  const json named = json::parse(
      envelope_grammar(
          request_of("{" + tools +
                     R"(, "tool_choice": {"type": "function", "function": {"name": "b"}}})"))
          .spec);
  EXPECT_EQ(named["properties"]["tool_calls"]["maxItems"], 1);
  EXPECT_EQ(named["properties"]["tool_calls"]["items"]["properties"]["name"]["const"], "b");

  const json autos = json::parse(envelope_grammar(request_of("{" + tools + "}")).spec);
  ASSERT_EQ(autos["anyOf"].size(), 2u);
  EXPECT_EQ(autos["anyOf"][1]["properties"]["response"]["type"], "string");

  const json single = json::parse(
      envelope_grammar(
          request_of("{" + tools + R"(, "tool_choice": "required", "parallel_tool_calls": false})"))
          .spec);
  EXPECT_EQ(single["properties"]["tool_calls"]["maxItems"], 1);
}

TEST(ToolEnvelope, HermesGrammarIsFreeTextThenCalls) {
  const std::string tools =
      R"("tools": [{"type": "function", "function": {"name": "a", "parameters": {"type": "object",
          "properties": {"x": {"type": "integer"}}}}},
        {"type": "function", "function": {"name": "b"}}])";
  const GrammarSpec autos = hermes_grammar(request_of("{" + tools + "}"));
  EXPECT_EQ(autos.kind, PLINTH_GRAMMAR_STRUCTURAL_TAG);
  const json a = json::parse(autos.spec);
  EXPECT_EQ(a["type"], "structural_tag");
  EXPECT_EQ(a["format"]["type"], "triggered_tags");
  EXPECT_EQ(a["format"]["triggers"], json::array({"<tool_call>"}));
  EXPECT_EQ(a["format"]["at_least_one"], false);
  EXPECT_EQ(a["format"]["stop_after_first"], false);
  ASSERT_EQ(a["format"]["tags"].size(), 2u);
  EXPECT_EQ(a["format"]["tags"][0]["begin"], "<tool_call>\n{\"name\": \"a\", \"arguments\": ");
  EXPECT_EQ(a["format"]["tags"][0]["end"], "}\n</tool_call>");
  EXPECT_EQ(a["format"]["tags"][0]["content"]["json_schema"]["properties"]["x"]["type"], "integer");
  const json named = json::parse(
      hermes_grammar(
          request_of("{" + tools +
                     R"(, "tool_choice": {"type": "function", "function": {"name": "b"}}})"))
          .spec);
  EXPECT_EQ(named["format"]["type"], "tags_with_separator");
  EXPECT_EQ(named["format"]["at_least_one"], true);
  EXPECT_EQ(named["format"]["stop_after_first"], true);
  ASSERT_EQ(named["format"]["tags"].size(), 1u);
  EXPECT_EQ(named["format"]["tags"][0]["begin"], "<tool_call>\n{\"name\": \"b\", \"arguments\": ");
}

TEST(ToolEnvelope, StrictClosesObjectsAndRefsMoveWithTheSchema) {
  const std::string raw = R"({"tool_choice": "required", "tools": [{"type": "function",
      "function": {"name": "f", "strict": true, "parameters": {"type": "object",
        "properties": {"p": {"$ref": "#/$defs/P"}, "q": {"type": "object",
          "properties": {"r": {"type": "string"}}}, "free": {"type": "object",
          "additionalProperties": true}},
        "$defs": {"P": {"type": "object", "properties": {"n": {"$ref": "#"}}}}}}}]})";
  const json env = json::parse(envelope_grammar(request_of(raw)).spec);
  const json& args = env["properties"]["tool_calls"]["items"]["properties"]["arguments"];
  EXPECT_EQ(args, json({{"$ref", "#/$defs/plinth_tool_0"}}));
  const json& moved = env["$defs"]["plinth_tool_0"];
  EXPECT_EQ(moved["additionalProperties"], false);
  EXPECT_EQ(moved["properties"]["q"]["additionalProperties"], false);
  EXPECT_EQ(moved["properties"]["free"]["additionalProperties"], true);  // given: kept
  EXPECT_EQ(moved["properties"]["p"], json({{"$ref", "#/$defs/plinth_tool_0/$defs/P"}}));
  EXPECT_EQ(moved["$defs"]["P"]["additionalProperties"], false);
  EXPECT_EQ(moved["$defs"]["P"]["properties"]["n"]["$ref"], "#/$defs/plinth_tool_0");
  // non-strict: the schema as given
  const std::string loose = R"({"tools": [{"type": "function", "function": {"name": "f",
      "parameters": {"type": "object", "properties": {"q": {"type": "object"}}}}}]})";
  const json p = json::parse(parameters_grammar(request_of(loose).tools[0]).spec);
  EXPECT_FALSE(p.contains("additionalProperties"));
  EXPECT_FALSE(p["properties"]["q"].contains("additionalProperties"));
}

TEST(ToolEnvelope, MessagesCarryToolsAndHistory) {
  const ToolRequest r = request_of(R"({"tools": [{"type": "function", "function": {"name": "f",
      "description": "does f"}}]})");
  ChatMessage call{"assistant", ""};
  call.tool_calls.push_back({"call_1", "f", "{\"a\": 1}"});
  call.tool_calls.push_back({"call_2", "f", "{\"a\": 2}"});
  ChatMessage r1{"tool", "one"};
  r1.tool_call_id = "call_1";
  ChatMessage r2{"tool", "two"};
  r2.tool_call_id = "call_2";
  const std::vector<ChatMessage> out =
      envelope_messages({{"system", "Be brief."}, {"user", "do f"}, call, r1, r2}, &r);
  ASSERT_EQ(out.size(), 4u);
  EXPECT_EQ(out[0].role, "system");
  EXPECT_EQ(out[0].content.rfind("Be brief.\n\nYou can call the following tools:", 0), 0u);
  EXPECT_NE(out[0].content.find("\"description\": \"does f\""), std::string::npos);
  EXPECT_EQ(out[2].role, "assistant");
  EXPECT_EQ(json::parse(out[2].content),
            json::parse(R"({"tool_calls": [{"name": "f", "arguments": {"a": 1}},
                                           {"name": "f", "arguments": {"a": 2}}]})"));
  EXPECT_EQ(out[3].role, "user");
  EXPECT_EQ(out[3].content,
            "{\"tool_response\":{\"name\":\"f\",\"tool_call_id\":\"call_1\",\"content\":\"one\"}}\n"
            "{\"tool_response\":{\"name\":\"f\",\"tool_call_id\":\"call_2\",\"content\":\"two\"}}");
  for (const ChatMessage& m : out) {
    EXPECT_TRUE(m.tool_calls.empty());
    EXPECT_TRUE(m.tool_call_id.empty());
  }
  // without a system message, one is put first
  EXPECT_EQ(envelope_messages({{"user", "x"}}, &r).front().role, "system");
}

}  // namespace
}  // namespace plinth::server
