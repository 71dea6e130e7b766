// The grammar plugin's masks against slow reference matchers that share nothing with XGrammar:
// for regular expressions a Thompson NFA re-run over the whole prefix plus each candidate token
// (reference_regex.hpp), for choice lists a string prefix comparison. On random walks (each step
// a token the reference allows, picked with a fixed seed) the engine's mask must allow exactly the
// tokens the reference allows: a text token when prefix + token can still be completed, a stop
// token when the prefix is complete. Over a small hand-made vocabulary (every printable ASCII byte,
// multi-byte tokens, UTF-8 split across tokens) and over SmolLM2's 49,152 tokens.
#include <gtest/gtest.h>

#include <filesystem>
#include <functional>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "grammar_engine.hpp"
#include "model/gguf.hpp"
#include "reference_regex.hpp"
#include "tokenizer/tokenizer.hpp"

namespace {

using plinth::grammar::CompileOptions;
using plinth::grammar::Engine;
using plinth::grammar::Matcher;
using plinth::grammar::SpecKind;
using plinth::grammar::Vocabulary;
using plinth::grammar::testing::ReferenceRegex;

/// id 0 "<eos>" (control, the stop id), 1 "<pad>" (control), then text tokens.
Vocabulary small_vocab() {
  Vocabulary v;
  v.bytes = {"<eos>", "<pad>"};
  v.types = {3, 3};
  for (int c = 0x20; c < 0x7F; ++c) v.bytes.emplace_back(1, static_cast<char>(c));
  for (const char* t :
       {"ab",   "abc", "com",  ".com",         "@",    "\\n", "\n", "\t",   "12",   "123",
        "00",   "-1",  "\"",   "\":",          "{\"",  "\"}", "é",  "\xC3", "\xA9", "\xE2\x82",
        "\xAC", "€",   "日本", "\xF0\x9F\x98", "\x80", "éx",  "  ", "a\"",  "true", "null"}) {
    v.bytes.emplace_back(t);
  }
  v.types.resize(v.bytes.size(), 1);
  v.stop_ids = {0};
  return v;
}

/// The reference's verdict for one token after `prefix`.
using Reference = std::function<bool(const std::string& prefix, int32_t token)>;

/// Random walks: at each step the engine's mask must equal the reference's over every token.
/// Returns the number of steps compared.
int walk_and_compare(Engine& engine, const Vocabulary& v,
                     const std::shared_ptr<const plinth::grammar::Compiled>& g,
                     const Reference& allowed_by_reference, const std::string& what, int walks,
                     int steps, uint32_t seed) {
  std::mt19937 rng(seed);
  std::vector<uint32_t> row(engine.words_per_row());
  int compared = 0;
  for (int w = 0; w < walks; ++w) {
    Matcher m(g);
    std::string prefix;
    for (int step = 0; step < steps; ++step) {
      m.fill(row.data(), static_cast<uint32_t>(row.size()), engine.vocab_size());
      std::vector<int32_t> text_allowed;
      int mismatches = 0;
      for (int32_t t = 0; t < engine.vocab_size(); ++t) {
        const bool fast = ((row[static_cast<size_t>(t) / 32] >> (t % 32)) & 1u) != 0;
        const bool slow = allowed_by_reference(prefix, t);
        if (fast != slow && ++mismatches <= 5) {
          ADD_FAILURE() << what << ": after \"" << prefix << "\" token " << t << " \""
                        << v.bytes[static_cast<size_t>(t)] << "\": engine "
                        << (fast ? "allows" : "refuses") << ", reference "
                        << (slow ? "allows" : "refuses");
        }
        if (slow && v.types[static_cast<size_t>(t)] == 1) text_allowed.push_back(t);
      }
      ++compared;
      if (mismatches != 0 || text_allowed.empty()) break;
      const int32_t t = text_allowed[rng() % text_allowed.size()];
      if (!m.accept(t)) {
        ADD_FAILURE() << what << ": the engine refused token " << t << " its mask allowed";
        break;
      }
      prefix += v.bytes[static_cast<size_t>(t)];
    }
  }
  return compared;
}

Reference regex_reference(const Vocabulary& v, const std::shared_ptr<ReferenceRegex>& re) {
  return [&v, re](const std::string& prefix, int32_t t) {
    const auto i = static_cast<size_t>(t);
    if (std::find(v.stop_ids.begin(), v.stop_ids.end(), t) != v.stop_ids.end()) {
      return re->complete(prefix);
    }
    if (v.types[i] != 1 || v.bytes[i].empty()) return false;
    return re->viable(prefix + v.bytes[i]);
  };
}

const std::vector<std::string>& patterns() {
  static const std::vector<std::string> p = {
      R"([a-z]{2,4}@[a-z]+\.(com|org))",
      R"(\(\d{3}\) \d{3}-\d{4})",
      R"((ab|a)*c)",
      R"(-?(0|[1-9][0-9]*)(\.[0-9]+)?)",
      R"("[^"\\]{0,5}")",
      R"(é+x?)",
      R"([€日本]{1,3}!)",
      R"(\w+ \w{1,2})",
      R"(.{1,3}z)",
      R"((?:yes|no|maybe)\.?)",
      R"(x[^a-y]y)",
      R"(^[A-Z][a-z]*( [A-Z][a-z]*){0,2}$)",
  };
  return p;
}

TEST(GrammarReference, RegexMasksAgreeWithTheNfaOnASmallVocabulary) {
  const Vocabulary v = small_vocab();
  Engine engine(v);
  int compared = 0;
  for (size_t i = 0; i < patterns().size(); ++i) {
    const std::string& p = patterns()[i];
    auto g = engine.compile(SpecKind::kRegex, p, CompileOptions{});
    auto re = std::make_shared<ReferenceRegex>(p);
    compared += walk_and_compare(engine, v, g, regex_reference(v, re), "regex " + p, 12, 14,
                                 static_cast<uint32_t>(i + 1));
  }
  EXPECT_GE(compared, 300);
}

TEST(GrammarReference, ChoiceMasksAgreeWithPrefixComparison) {
  const Vocabulary v = small_vocab();
  Engine engine(v);
  const std::vector<std::string> choices = {"yes", "no", "maybe", "abc.com", "ab", "é€", "a\"b"};
  auto g = engine.compile(SpecKind::kChoice,
                          R"(["yes", "no", "maybe", "abc.com", "ab", "é€", "a\"b"])", {});
  const Reference ref = [&](const std::string& prefix, int32_t t) {
    const auto i = static_cast<size_t>(t);
    if (t == 0) return std::find(choices.begin(), choices.end(), prefix) != choices.end();
    if (v.types[i] != 1) return false;
    const std::string s = prefix + v.bytes[i];
    return std::any_of(choices.begin(), choices.end(),
                       [&](const std::string& c) { return c.compare(0, s.size(), s) == 0; });
  };
  EXPECT_GE(walk_and_compare(engine, v, g, ref, "choice", 20, 10, 7), 40);
}

TEST(GrammarReference, RegexMasksAgreeWithTheNfaOnSmolLM2sVocabulary) {
  if (!std::filesystem::exists(PLINTH_REAL_MODEL))
    GTEST_SKIP() << PLINTH_REAL_MODEL << " is missing";
  auto file = plinth::GgufFile::open(PLINTH_REAL_MODEL);
  const plinth::Tokenizer tok = plinth::Tokenizer::from_gguf(*file);
  Vocabulary v;
  for (int32_t i = 0; i < tok.vocab_size(); ++i) {
    v.bytes.push_back(tok.token_to_bytes(i));
    v.types.push_back(static_cast<int32_t>(tok.token_type(i)));
  }
  v.stop_ids = {tok.eos_id()};
  // The reference treats GGUF normal tokens as text; others (control, user-defined, byte) are
  // compared only where they are plain text too.
  for (auto& t : v.types) {
    if (t != 3 && t != 2 && t != 5) t = 1;
  }
  Engine engine(v);
  int compared = 0;
  for (const std::string& p : {patterns()[0], patterns()[1], patterns()[5], patterns()[11]}) {
    auto g = engine.compile(SpecKind::kRegex, p, CompileOptions{});
    auto re = std::make_shared<ReferenceRegex>(p);
    compared += walk_and_compare(engine, v, g, regex_reference(v, re), "regex " + p, 2, 8, 3);
  }
  EXPECT_GE(compared, 16);
}

}  // namespace
