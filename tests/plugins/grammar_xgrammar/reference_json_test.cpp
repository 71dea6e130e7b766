// The grammar plugin's JSON Schema masks against a slow reference matcher that shares nothing with
// XGrammar (reference_json.hpp: backtracking recursive descent over the prepared schema,
// re-parsing the whole prefix for every candidate token). Prefixes: every byte position of each
// valid instance (serialized compactly, fed byte by byte: at each byte the engine's accept must
// equal the reference's viability), the full mask compared at random cut positions, and random
// walks (each step a token picked at random from the engine's mask). At each compared prefix, for
// every token of the vocabulary compared, the mask bit must equal "prefix + token is viable" (a
// stop token: "prefix is complete"), and can_end must equal "prefix is complete".
// Schemas: hand-written ones for each keyword, the committed JSONSchemaBench sample and the JSON
// Schema Test Suite (draft 7); those the engine refuses or the reference does not model are
// skipped (and counted). Vocabularies: a byte vocabulary (every byte 0x01-0xFF as a token plus
// multi-byte tokens, all compared at every prefix) and SmolLM2's 49,152 tokens (a sample: every
// token the mask allows up to 256 of them, and 256 other random tokens per prefix).
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <memory>
#include <nlohmann/json.hpp>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "grammar_engine.hpp"
#include "model/gguf.hpp"
#include "reference_json.hpp"
#include "tokenizer/tokenizer.hpp"

namespace {

namespace fs = std::filesystem;
using nlohmann::ordered_json;
using plinth::grammar::Compiled;
using plinth::grammar::CompileError;
using plinth::grammar::Engine;
using plinth::grammar::Matcher;
using plinth::grammar::SpecKind;
using plinth::grammar::Vocabulary;
using plinth::grammar::testing::ReferenceJson;

/// id 0 "<eos>" (control, the stop id), then every byte 0x01-0xFF, then multi-byte tokens.
Vocabulary byte_vocab() {
  Vocabulary v;
  v.bytes = {"<eos>"};
  v.types = {3};
  for (int c = 1; c < 256; ++c) v.bytes.emplace_back(1, static_cast<char>(c));
  for (const char* t :
       {"{\"",  "\":",   "\",",  "\"}",  "\":\"",    "  ",    "\n  ",  ", ",      ": ",     "true",
        "null", "false", "12",   "-0",   "0.",       ".5",    "1e",    "e+",      "00",     "-1",
        "123",  "é",     "€",    "日本", "\\\"",     "\\u00", "\\n",   "[]",      "{}",     "],",
        "\"a",  "id",    "name", "type", "\"name\"", "-01",   "2024-", "1234567", ".000001"}) {
    v.bytes.emplace_back(t);
  }
  v.types.resize(v.bytes.size(), 1);
  v.stop_ids = {0};
  return v;
}

/// `s` printable: bytes outside ASCII's printable range as \xHH.
std::string shown(std::string_view s) {
  std::string out;
  for (unsigned char c : s) {
    if (c >= 0x20 && c < 0x7F) {
      out += static_cast<char>(c);
    } else {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\x%02X", c);
      out += buf;
    }
  }
  return out;
}

struct Figures {
  int schemas = 0, refused_by_engine = 0, unsupported_by_reference = 0;
  long prefixes = 0, tokens = 0, disagreements = 0;
};

/// Compares one prefix; returns the disagreements (the first few are reported).
struct Comparer {
  Engine& engine;
  const Vocabulary& v;
  const ReferenceJson& ref;
  const std::string& what;
  Figures& fig;
  int sample_allowed = 0;  // 0: every token; else a sample (SmolLM2)
  int sample_others = 0;
  std::mt19937 rng{1};

  bool bit(const std::vector<uint32_t>& row, int32_t t) const {
    return ((row[static_cast<size_t>(t) / 32] >> (t % 32)) & 1u) != 0;
  }

  long compare(Matcher& m, const std::string& prefix, std::vector<uint32_t>& row) {
    m.fill(row.data(), static_cast<uint32_t>(row.size()), engine.vocab_size());
    std::vector<int32_t> tokens;
    if (sample_allowed == 0) {
      for (int32_t t = 0; t < engine.vocab_size(); ++t) tokens.push_back(t);
    } else {
      std::vector<int32_t> allowed;
      for (int32_t t = 0; t < engine.vocab_size(); ++t) {
        if (bit(row, t)) allowed.push_back(t);
      }
      std::shuffle(allowed.begin(), allowed.end(), rng);
      allowed.resize(std::min(allowed.size(), static_cast<size_t>(sample_allowed)));
      tokens = allowed;
      for (int i = 0; i < sample_others; ++i) {
        tokens.push_back(static_cast<int32_t>(rng() % static_cast<uint32_t>(engine.vocab_size())));
      }
      tokens.insert(tokens.end(), v.stop_ids.begin(), v.stop_ids.end());
    }
    const bool complete = ref.complete(prefix);
    long bad = 0;
    if (m.can_end() != complete) {
      ++bad;
      ADD_FAILURE() << what << ": after \"" << shown(prefix) << "\" the engine "
                    << (m.can_end() ? "can" : "cannot") << " end, the reference says "
                    << (complete ? "complete" : "incomplete");
    }
    for (int32_t t : tokens) {
      const auto i = static_cast<size_t>(t);
      const bool stop = std::find(v.stop_ids.begin(), v.stop_ids.end(), t) != v.stop_ids.end();
      bool slow;
      if (stop) {
        slow = complete;
      } else if (v.types[i] != 1 || v.bytes[i].empty()) {
        slow = false;
      } else {
        slow = ref.viable(prefix + v.bytes[i]);
      }
      const bool fast = bit(row, t);
      if (fast != slow && ++bad <= 4) {
        ADD_FAILURE() << what << ": after \"" << shown(prefix) << "\" token " << t << " \""
                      << shown(v.bytes[i]) << "\": engine " << (fast ? "allows" : "refuses")
                      << ", reference " << (slow ? "allows" : "refuses");
      }
    }
    ++fig.prefixes;
    fig.tokens += static_cast<long>(tokens.size());
    fig.disagreements += bad;
    return bad;
  }
};

/// A run of 0-4 random JSON whitespace bytes (the bounded policy's longest run is 4).
std::string ws_run(std::mt19937& rng) {
  std::string out(rng() % 5, ' ');
  for (char& c : out) c = " \n\r\t"[rng() % 4];
  return out;
}

/// `j` serialized with random whitespace runs where the engine's policy allows them: after '{' /
/// '[' (one run in an empty one), around ',' and ':', before '}' / ']'; none around the root.
std::string spaced(const ordered_json& j, std::mt19937& rng) {
  if (j.is_object() || j.is_array()) {
    const bool object = j.is_object();
    std::string out(1, object ? '{' : '[');
    if (j.empty()) return out + ws_run(rng) + (object ? '}' : ']');
    out += ws_run(rng);
    bool first = true;
    for (auto it = j.begin(); it != j.end(); ++it) {
      if (!first) out += ws_run(rng) + "," + ws_run(rng);
      first = false;
      if (object) out += ordered_json(it.key()).dump() + ws_run(rng) + ":" + ws_run(rng);
      out += spaced(*it, rng);
    }
    return out + ws_run(rng) + (object ? '}' : ']');
  }
  return j.dump();
}

/// Feeds `text` byte by byte (each byte's token: `byte_token`): at each byte the engine's mask
/// bit against the reference's viability, the whole mask at `cuts`. Stops where both refuse.
void feed(Comparer& cmp, const std::shared_ptr<const Compiled>& g,
          const std::vector<int32_t>& byte_token, const std::string& text,
          const std::set<size_t>& cuts) {
  Matcher m(g);
  std::vector<uint32_t> row(cmp.engine.words_per_row());
  std::string prefix;
  for (size_t i = 0; i <= text.size(); ++i) {
    if (cuts.count(i) != 0 && cmp.compare(m, prefix, row) != 0) return;
    if (i == text.size()) return;
    const int32_t t = byte_token[static_cast<unsigned char>(text[i])];
    const std::string next = prefix + text[i];
    const bool slow = cmp.ref.viable(next);
    m.fill(row.data(), static_cast<uint32_t>(row.size()), cmp.engine.vocab_size());
    const bool fast = cmp.bit(row, t);
    ++cmp.fig.tokens;
    if (fast != slow) {
      ++cmp.fig.disagreements;
      ADD_FAILURE() << cmp.what << ": after \"" << shown(prefix) << "\" byte '"
                    << shown(text.substr(i, 1)) << "': engine " << (fast ? "allows" : "refuses")
                    << ", reference " << (slow ? "allows" : "refuses");
      return;
    }
    if (!fast) return;  // both refuse: the instance is outside the engine's serialization
    EXPECT_TRUE(m.accept(t));
    prefix = next;
  }
}

/// A random walk: each step the whole mask compared, then a text token it allows taken.
void walk(Comparer& cmp, const std::shared_ptr<const Compiled>& g, int steps, std::mt19937& rng) {
  Matcher m(g);
  std::vector<uint32_t> row(cmp.engine.words_per_row());
  std::string prefix;
  for (int step = 0; step < steps; ++step) {
    if (cmp.compare(m, prefix, row) != 0) return;
    std::vector<int32_t> text_allowed;
    for (int32_t t = 0; t < cmp.engine.vocab_size(); ++t) {
      if (cmp.bit(row, t) && cmp.v.types[static_cast<size_t>(t)] == 1) text_allowed.push_back(t);
    }
    if (text_allowed.empty()) return;
    const int32_t t = text_allowed[rng() % text_allowed.size()];
    if (!m.accept(t)) {
      ADD_FAILURE() << cmp.what << ": the engine refused token " << t << " its mask allowed";
      return;
    }
    prefix += cmp.v.bytes[static_cast<size_t>(t)];
  }
}

// NOLINTNEXTLINE(bugprone-exception-escape): ordered_json's noexcept move calls ordered_map's.
struct Source {
  std::string name;
  ordered_json schema;
  std::vector<ordered_json> valid;
};

/// Runs one schema: each valid instance fed compactly and with random whitespace (the vocabulary
/// must hold every byte as a token: `byte_token`), with cut positions and random walks compared
/// in full.
void run_schema(Engine& engine, const Vocabulary& v, const std::vector<int32_t>& byte_token,
                const Source& src, int sample_allowed, int sample_others, int walks, int steps,
                Figures& fig) {
  std::shared_ptr<const Compiled> g;
  std::string prepared;
  try {
    prepared = plinth::grammar::prepare_json_schema(src.schema.dump(), false);
    g = engine.compile(SpecKind::kJsonSchema, src.schema.dump(), {});
  } catch (const CompileError&) {
    ++fig.refused_by_engine;
    return;
  }
  std::unique_ptr<ReferenceJson> ref;
  try {
    ref = std::make_unique<ReferenceJson>(prepared, ReferenceJson::Options{.max_ws = 4});
  } catch (const ReferenceJson::Unsupported&) {
    ++fig.unsupported_by_reference;
    return;
  }
  ++fig.schemas;
  Comparer cmp{engine, v, *ref, src.name, fig, sample_allowed, sample_others};
  std::mt19937 rng(static_cast<uint32_t>(std::hash<std::string>{}(src.name)));
  for (const ordered_json& inst : src.valid) {
    for (const std::string& text : {inst.dump(), spaced(inst, rng)}) {
      std::set<size_t> cuts = {0, text.size()};
      for (int i = 0; i < 3; ++i) cuts.insert(rng() % (text.size() + 1));
      feed(cmp, g, byte_token, text, cuts);
    }
  }
  for (int w = 0; w < walks; ++w) walk(cmp, g, steps, rng);
}

/// Hand-written schemas, one or two keywords each, with instances.
std::vector<Source> hand_written() {
  const char* cases[][2] = {
      {R"({"type":"object","properties":{"a":{"type":"integer","minimum":-5,"maximum":120},
          "b":{"type":"string","minLength":1,"maxLength":3},"c":{"type":"array",
          "items":{"type":"boolean"},"minItems":1,"maxItems":2}},"required":["b"],
          "additionalProperties":false})",
       R"([{"a":-5,"b":"xyz","c":[true]},{"b":"é"},{"a":120,"b":"a","c":[false,true]}])"},
      {R"({"type":"number","minimum":-1.5,"exclusiveMaximum":20})", R"([-1.5,0,19.999999,3.25])"},
      {R"({"type":"number","exclusiveMinimum":0.001,"maximum":1})", R"([0.0011,1,0.5])"},
      {R"({"type":"integer","minimum":100,"maximum":120})", R"([100,120,111])"},
      {R"({"type":"integer","exclusiveMinimum":-1000,"maximum":-7})", R"([-7,-999,-50])"},
      {R"({"type":"number"})", R"([-0.0,1e5,2.5E-3,0])"},
      {R"({"type":"integer","minimum":7})", R"([7,8,100000])"},
      {R"({"type":"string","pattern":"^[a-z]{2,4}@[a-z]+\\.(com|org)$"})",
       R"(["ab@x.com","abcd@qq.org"])"},
      {R"({"type":"string","pattern":"^\\d{3}-\\d{4}$"})", R"(["123-4567"])"},
      {R"({"type":"string","format":"uuid"})", R"(["123e4567-e89b-12d3-a456-426614174000"])"},
      {R"({"type":"string","format":"date"})", R"(["2024-02-29","1999-12-31"])"},
      {R"({"enum":["x\"y",1.5,{"k":[1,2]},null,true,"a/b"]})", R"(["x\"y",{"k":[1,2]},true])"},
      {R"({"const":{"a":"é\n"}})", R"([{"a":"é\n"}])"},
      {R"({"type":"object","properties":{"a":{"type":"null"},"b":{"type":"null"},
          "c":{"type":"null"}},"required":["b"]})",
       R"([{"a":null,"b":null,"c":null,"zz":1},{"b":null,"x":[1,{"y":"z"}]}])"},
      {R"({"type":"object","properties":{"a":{"type":"number","minimum":0}},
          "additionalProperties":{"type":"integer","minimum":3}})",
       R"([{"a":0.5,"b":3},{"x":4,"y":5},{}])"},
      {R"({"type":"array","prefixItems":[{"type":"integer"},{"const":"q"}],
          "items":{"type":"null"},"minItems":1,"maxItems":4})",
       R"([[1],[1,"q"],[1,"q",null,null]])"},
      {R"({"anyOf":[{"type":"string","maxLength":2},{"type":"integer","maximum":5},
          {"type":"array","items":{"$ref":"#"}}]})",
       R"(["ab",5,-3,[["x"],[1,[2]]]])"},
      {R"({"$defs":{"n":{"type":"object","properties":{"v":{"type":"integer"},
          "next":{"$ref":"#/$defs/n"}},"required":["v"],"additionalProperties":false}},
          "$ref":"#/$defs/n"})",
       R"([{"v":1,"next":{"v":2}}])"},
      {R"({"type":["string","null"]})", R"(["s\u0001\\",null])"},
      {R"({"type":"object","properties":{"s":{"type":"string","maxLength":2}}})",
       R"([{"s":"ab"}])"},
      {R"({"type":"string","pattern":"^a.b$"})", R"(["axb"])"},
      {R"({"type":"string","pattern":"^[^x]{1,3}$"})", R"(["abc"])"},
      // refused by the subset check since the reference found the raw quote (schema_subset_test)
      {R"({"type":"string","pattern":"^a\"c\\\\$"})", R"(["a\"c\\"])"},
  };
  std::vector<Source> out;
  for (size_t i = 0; i < std::size(cases); ++i) {
    Source s;
    s.name = "hand-written " + std::to_string(i);
    s.schema = ordered_json::parse(cases[i][0]);
    for (const auto& inst : ordered_json::parse(cases[i][1])) s.valid.push_back(inst);
    out.push_back(std::move(s));
  }
  return out;
}

std::vector<Source> sample_sources() {
  std::vector<Source> out;
  std::vector<fs::path> files;
  for (const auto& e : fs::directory_iterator(PLINTH_GRAMMAR_SAMPLE)) {
    if (e.path().extension() == ".json") files.push_back(e.path());
  }
  std::sort(files.begin(), files.end());
  for (const fs::path& f : files) {
    std::ifstream in(f);
    const ordered_json doc = ordered_json::parse(in);
    Source s;
    s.name = f.filename().string();
    s.schema = doc.at("schema");
    for (const auto& t : doc.at("tests")) {
      if (t.at("valid").get<bool>()) s.valid.push_back(t.at("data"));
    }
    out.push_back(std::move(s));
  }
  return out;
}

std::vector<Source> suite_sources() {
  std::vector<Source> out;
  if (!fs::is_directory(PLINTH_JSON_SCHEMA_SUITE)) return out;
  std::vector<fs::path> files;
  for (const auto& e : fs::directory_iterator(PLINTH_JSON_SCHEMA_SUITE)) {
    if (e.path().extension() == ".json") files.push_back(e.path());
  }
  std::sort(files.begin(), files.end());
  for (const fs::path& f : files) {
    std::ifstream in(f);
    for (const auto& group : ordered_json::parse(in)) {
      Source s;
      s.name = f.filename().string() + ": " + group.value("description", "");
      s.schema = group.at("schema");
      for (const auto& t : group.at("tests")) {
        if (t.at("valid").get<bool>()) s.valid.push_back(t.at("data"));
      }
      out.push_back(std::move(s));
    }
  }
  return out;
}

void print(const char* what, const Figures& f) {
  std::printf(
      "%s: %d schemas compared (%d refused by the engine, %d outside the reference), %ld "
      "prefixes, %ld token verdicts, %ld disagreements\n",
      what, f.schemas, f.refused_by_engine, f.unsupported_by_reference, f.prefixes, f.tokens,
      f.disagreements);
}

TEST(GrammarReferenceJson, MasksAgreeOnAByteVocabulary) {
  const Vocabulary v = byte_vocab();
  Engine engine(v);
  std::vector<int32_t> byte_token(256, 0);
  for (int c = 1; c < 256; ++c) byte_token[static_cast<size_t>(c)] = c;
  Figures fig;
  std::vector<Source> all = hand_written();
  for (auto& s : sample_sources()) all.push_back(std::move(s));
  for (auto& s : suite_sources()) all.push_back(std::move(s));
  for (const Source& s : all) run_schema(engine, v, byte_token, s, 0, 0, 3, 24, fig);
  print("byte vocabulary", fig);
  EXPECT_EQ(fig.disagreements, 0);
  EXPECT_GE(fig.schemas, 40);
}

TEST(GrammarReferenceJson, MasksAgreeOnSmolLM2sVocabulary) {
  if (!fs::exists(PLINTH_REAL_MODEL)) GTEST_SKIP() << PLINTH_REAL_MODEL << " is missing";
  auto file = plinth::GgufFile::open(PLINTH_REAL_MODEL);
  const plinth::Tokenizer tok = plinth::Tokenizer::from_gguf(*file);
  Vocabulary v;
  std::vector<int32_t> byte_token(256, -1);
  for (int32_t i = 0; i < tok.vocab_size(); ++i) {
    v.bytes.push_back(tok.token_to_bytes(i));
    int32_t type = static_cast<int32_t>(tok.token_type(i));
    if (type != 3 && type != 2 && type != 5) type = 1;
    v.types.push_back(type);
    if (v.bytes.back().size() == 1 && type == 1) {
      auto& slot = byte_token[static_cast<unsigned char>(v.bytes.back()[0])];
      if (slot < 0) slot = i;
    }
  }
  v.stop_ids = {tok.eos_id()};
  Engine engine(v);
  Figures fig;
  std::vector<Source> all = hand_written();
  all.resize(8);
  const auto sample = sample_sources();
  for (size_t i = 0; i < sample.size(); i += 8) all.push_back(sample[i]);
  for (const Source& s : all) {
    // Instances holding a byte without its own token are not fed.
    Source fed = s;
    fed.valid.erase(std::remove_if(fed.valid.begin(), fed.valid.end(),
                                   [&](const ordered_json& j) {
                                     for (unsigned char c : j.dump()) {
                                       if (byte_token[c] < 0) return true;
                                     }
                                     return false;
                                   }),
                    fed.valid.end());
    run_schema(engine, v, byte_token, fed, 256, 256, 2, 12, fig);
  }
  print("SmolLM2 vocabulary (sampled)", fig);
  EXPECT_EQ(fig.disagreements, 0);
  EXPECT_GE(fig.schemas, 8);
}

TEST(GrammarReferenceJson, EngineBugsItFoundStayFixed) {
  // Found by the reference in XGrammar 0.2.9, fixed by json_string_classes.hpp: raw control
  // characters in strings with minLength / maxLength, UTF-8 surrogates (ED A0-BF) in strings.
  const Vocabulary v = byte_vocab();
  Engine engine(v);
  std::vector<uint32_t> row(engine.words_per_row());
  const auto allowed_after = [&](const char* schema, const std::string& prefix, int32_t t) {
    Matcher m(engine.compile(SpecKind::kJsonSchema, schema, {}));
    for (unsigned char c : prefix) EXPECT_TRUE(m.accept(c)) << prefix;
    m.fill(row.data(), static_cast<uint32_t>(row.size()), engine.vocab_size());
    return ((row[static_cast<size_t>(t) / 32] >> (t % 32)) & 1u) != 0;
  };
  const char* bounded = R"({"type":"object","properties":{"s":{"type":"string","maxLength":3}}})";
  EXPECT_FALSE(allowed_after(bounded, "{\"s\":\"", '\t'));
  EXPECT_FALSE(allowed_after(bounded, "{\"s\":\"", 0x01));
  EXPECT_FALSE(allowed_after(bounded, "{\"s\":\"", 0x1F));
  EXPECT_TRUE(allowed_after(bounded, "{\"s\":\"", 'a'));
  EXPECT_FALSE(allowed_after(bounded, "{\"s\":\"\xED", 0xA0));  // U+D800
  EXPECT_TRUE(allowed_after(bounded, "{\"s\":\"\xED", 0x9F));   // U+D7FF
  EXPECT_FALSE(allowed_after(bounded, "{\"x\":\"\xED", 0xBF));  // an additional key's value
  EXPECT_FALSE(allowed_after(R"({"type":"string"})", "\"\xED", 0xA0));
  EXPECT_TRUE(allowed_after(R"({"type":"string"})", "\"\xEE", 0x80));  // U+E000
  EXPECT_FALSE(allowed_after(R"({"type":"string","pattern":"^[^x]+$"})", "\"\xED", 0xA0));
  // The structural tag kind (tool calls) gets the same corrections.
  Matcher tag(engine.compile(SpecKind::kStructuralTag, R"({"type": "structural_tag", "format": {
      "type": "triggered_tags", "triggers": ["<t>"], "tags": [{"type": "tag", "begin": "<t>",
      "content": {"type": "json_schema", "json_schema": {"type": "string", "maxLength": 3}},
      "end": "</t>"}], "at_least_one": false, "stop_after_first": false}})",
                             {}));
  for (unsigned char c : std::string("ab<t>\"")) ASSERT_TRUE(tag.accept(c));
  tag.fill(row.data(), static_cast<uint32_t>(row.size()), engine.vocab_size());
  const auto tag_bit = [&](int32_t t) {
    return ((row[static_cast<size_t>(t) / 32] >> (t % 32)) & 1u) != 0;
  };
  EXPECT_FALSE(tag_bit('\t'));
  EXPECT_TRUE(tag_bit('a'));
}

}  // namespace
