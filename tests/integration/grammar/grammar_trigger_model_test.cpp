// A grammar armed by a trigger token (GenerationRequest::grammar_trigger, llama.cpp's lazy
// grammar) on the real model (SmolLM2-135M, the grammar plugin grammar_xgrammar):
//  - until the trigger is sampled the output is exactly that of a request without a grammar
//    (greedy ids compared with unconstrained decoding, independent of the grammar code); the
//    trigger is the token the unconstrained output had there; from the token after it the
//    output follows the grammar (a JSON Schema, parsed and checked with nlohmann::json) and ends
//    where the grammar can;
//  - RequestOutput::trigger_offset splits the streamed text exactly: the text of the tokens
//    before the trigger, then that of the tokens after it (the trigger adds none), also when a
//    stop string held the last bytes before the trigger back;
//  - temperature 0: the same ids one at a time, all at once, with the full sampler (logprobs),
//    with the prefix cache (twice: hits) and beside an n-gram speculator whose drafts repeat the
//    prompt through the trigger (drafts are cut before it);
//  - a trigger never sampled leaves the output equal to unconstrained decoding.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <optional>
#include <ostream>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "app/engine_host.hpp"
#include "grammar_model_setup.hpp"
#include "runtime/host_context.hpp"
#include "runtime/logging.hpp"

namespace plinth {
namespace {

namespace fs = std::filesystem;
using grammar_model::load;

const char* const kSchema = R"({"type": "object", "properties": {
  "word": {"type": "string", "maxLength": 12},
  "count": {"type": "integer", "minimum": 0, "maximum": 99}},
  "required": ["word", "count"], "additionalProperties": false})";

fs::path write_manifest(const std::string& name, bool prefix, bool ngram) {
  return grammar_model::write_manifest("plinth_grammar_trigger", name, prefix, ngram);
}

// Asks whose greedy replies repeat text of the prompt (the n-gram speculator drafts it, through
// the trigger).
const std::vector<std::string> kAsks = {
    "Repeat exactly: the quick brown fox jumps over the lazy dog.",
    "Say this sentence twice: I like green apples and red cherries.",
    "Copy this list: one, two, three, four, five, six.",
};

struct Result {
  std::vector<int32_t> ids;
  std::string finish;
  std::optional<size_t> trigger_index;
  std::string text;                      // the streamed text, all steps
  std::optional<size_t> trigger_offset;  // where the trigger fell in `text`
  bool operator==(const Result& o) const {
    return ids == o.ids && finish == o.finish && trigger_index == o.trigger_index;
  }
};

void PrintTo(const Result& r, std::ostream* os) {
  *os << r.finish << ", trigger at "
      << (r.trigger_index ? std::to_string(*r.trigger_index) : std::string("none")) << ", ids";
  for (int32_t id : r.ids) *os << ' ' << id;
}

struct Options {
  bool speculative = true;
  bool one_at_a_time = true;
  bool logprobs = false;
};

// Greedy (max_tokens 60) over kAsks; `triggers[i]` arms `grammar` for ask i (nullopt or a null
// grammar: unconstrained).
std::vector<Result> run(EngineHost& h, const std::shared_ptr<CompiledGrammar>& grammar,
                        const std::vector<std::optional<int32_t>>& triggers, Options o,
                        const std::vector<std::string>& stops = {}) {
  Engine& e = h.engine();
  std::vector<uint64_t> ids;
  std::map<uint64_t, Result> results;
  auto drain = [&](bool all) {
    while (e.has_unfinished()) {
      for (const RequestOutput& out : e.step()) {
        Result& r = results[out.request_id];
        if (out.trigger_offset) r.trigger_offset = r.text.size() + *out.trigger_offset;
        r.text += out.text_delta;
      }
      if (!all) break;
    }
  };
  for (size_t i = 0; i < kAsks.size(); ++i) {
    GenerationRequest g;
    g.prompt = h.encode_chat({{"user", kAsks[i]}});
    g.params.temperature = 0.0f;
    g.params.max_tokens = 60;
    if (i < stops.size() && !stops[i].empty()) g.params.stop = {stops[i]};
    g.speculative = o.speculative;
    g.logprobs = o.logprobs;
    if (triggers[i]) {
      g.grammar = grammar;
      g.grammar_trigger = triggers[i];
    }
    ids.push_back(e.add_request(std::move(g)));
    if (o.one_at_a_time) drain(true);
  }
  drain(true);
  std::vector<Result> out;
  for (uint64_t id : ids) {
    const Sequence* s = e.find(id);
    Result r = results[id];
    r.ids.assign(s->output().begin(), s->output().end());
    r.finish = *s->finish_reason();
    r.trigger_index = s->trigger_index();
    EXPECT_EQ(s->trigger_text_offset(), r.trigger_offset) << "Sequence's offset == the steps'";
    EXPECT_EQ(s->text(), r.text);
    out.push_back(std::move(r));
    e.release(id);
  }
  return out;
}

// The first output position >= 3 whose token did not occur before it, preferring the middle of
// the reply (a token the n-gram speculator drafts from the prompt).
size_t pick_trigger(const std::vector<int32_t>& ids) {
  for (size_t k = std::min<size_t>(8, ids.size() / 2); k + 1 < ids.size(); ++k) {
    if (std::find(ids.begin(), ids.begin() + static_cast<std::ptrdiff_t>(k), ids[k]) ==
        ids.begin() + static_cast<std::ptrdiff_t>(k)) {
      return k;
    }
  }
  return ids.size();
}

std::shared_ptr<CompiledGrammar> grammar_for(EngineHost& h) {
  GrammarSpec spec;
  spec.kind = PLINTH_GRAMMAR_JSON_SCHEMA;
  spec.spec = kSchema;
  spec.strict = true;
  return h.grammar().compile(spec);
}

class GrammarTriggerModel : public grammar_model::ModelTest {};

TEST_F(GrammarTriggerModel, FreeUntilTheTriggerThenTheGrammarAndTheSameIdsEverywhere) {
  std::unique_ptr<EngineHost> h = load(host_, write_manifest("plain", false, false));
  std::shared_ptr<CompiledGrammar> grammar = grammar_for(*h);  // released before its host
  const std::vector<std::optional<int32_t>> none(kAsks.size());
  const std::vector<Result> plain = run(*h, nullptr, none, {});

  std::vector<std::optional<int32_t>> triggers;
  std::vector<size_t> at;
  for (const Result& r : plain) {
    at.push_back(pick_trigger(r.ids));
    ASSERT_LT(at.back(), r.ids.size()) << "no trigger candidate in a greedy reply";
    triggers.emplace_back(r.ids[at.back()]);
  }
  const std::vector<Result> base = run(*h, grammar, triggers, {.speculative = false});
  const Tokenizer& tok = h->tokenizer();
  std::vector<std::pair<std::string, std::string>> texts;  // per ask: text before, after
  for (size_t i = 0; i < base.size(); ++i) {
    SCOPED_TRACE(kAsks[i]);
    const Result& r = base[i];
    ASSERT_EQ(r.trigger_index, at[i]);
    ASSERT_GT(r.ids.size(), at[i] + 1);
    EXPECT_TRUE(std::equal(r.ids.begin(), r.ids.begin() + static_cast<std::ptrdiff_t>(at[i] + 1),
                           plain[i].ids.begin()))
        << "before the trigger: the unconstrained greedy ids";
    EXPECT_EQ(r.finish, "stop") << "the grammar ends the reply where it can";
    const std::vector<int32_t> before(r.ids.begin(),
                                      r.ids.begin() + static_cast<std::ptrdiff_t>(at[i]));
    std::vector<int32_t> after(r.ids.begin() + static_cast<std::ptrdiff_t>(at[i] + 1), r.ids.end());
    if (!after.empty() && std::ranges::count(h->stop_token_ids(), after.back()) > 0) {
      after.pop_back();  // the stop token adds no text
    }
    const std::string json_text = tok.decode(after, true);
    std::printf("%s | trigger %d | %s\n", tok.decode(before, true).c_str(), *triggers[i],
                json_text.c_str());
    ASSERT_TRUE(r.trigger_offset.has_value());
    EXPECT_EQ(r.text.substr(0, *r.trigger_offset), tok.decode(before, true));
    EXPECT_EQ(r.text.substr(*r.trigger_offset), json_text);
    texts.push_back({tok.decode(before, true), json_text});
    const nlohmann::json v = nlohmann::json::parse(json_text);
    ASSERT_TRUE(v.is_object());
    EXPECT_EQ(v.size(), 2u);
    EXPECT_TRUE(v.at("word").is_string());
    EXPECT_LE(v.at("word").get<std::string>().size(), 12u);
    EXPECT_TRUE(v.at("count").is_number_integer());
  }

  EXPECT_EQ(run(*h, grammar, triggers, {.speculative = true}), base) << "forced drafts on";
  // A stop string starting with the last bytes before the trigger: the matcher holds them back
  // as a possible stop, and the trigger releases them (no stop string spans it), so the split
  // is still exact.
  std::vector<std::string> stops;  // stops[i]: ask i's stop string ("" = none)
  for (const auto& [before, after] : texts) {
    stops.push_back(before.size() >= 3 ? before.substr(before.size() - 3) + "\x7f" : "");
  }
  const std::vector<Result> with_stops = run(*h, grammar, triggers, {.speculative = false}, stops);
  EXPECT_EQ(with_stops, base) << "stop strings that never complete";
  for (size_t i = 0; i < with_stops.size(); ++i) {
    ASSERT_TRUE(with_stops[i].trigger_offset.has_value());
    EXPECT_EQ(with_stops[i].text.substr(0, *with_stops[i].trigger_offset), texts[i].first);
    EXPECT_EQ(with_stops[i].text.substr(*with_stops[i].trigger_offset), texts[i].second);
  }
  EXPECT_EQ(run(*h, grammar, triggers, {.one_at_a_time = false}), base) << "all at once";
  EXPECT_EQ(run(*h, grammar, triggers, {.one_at_a_time = false, .logprobs = true}), base)
      << "the full sampler (logprobs), all at once";
  // A trigger the model never samples (a control token): unconstrained decoding.
  const std::vector<std::optional<int32_t>> never(kAsks.size(), 5);
  const std::vector<Result> dormant = run(*h, grammar, never, {});
  for (size_t i = 0; i < dormant.size(); ++i) {
    EXPECT_EQ(dormant[i].ids, plain[i].ids) << kAsks[i];
    EXPECT_FALSE(dormant[i].trigger_index.has_value());
    EXPECT_EQ(dormant[i].text, plain[i].text);
  }
  grammar.reset();
  h.reset();

  std::unique_ptr<EngineHost> cached = load(host_, write_manifest("prefix", true, false));
  for (int round = 0; round < 2; ++round) {
    SCOPED_TRACE(round == 0 ? "prefix cache, first round" : "prefix cache, second round (hits)");
    EXPECT_EQ(run(*cached, grammar_for(*cached), triggers, {.one_at_a_time = false}), base);
  }
  cached.reset();

  std::unique_ptr<EngineHost> ngram = load(host_, write_manifest("ngram", false, true));
  const std::shared_ptr<CompiledGrammar> g3 = grammar_for(*ngram);
  EXPECT_EQ(run(*ngram, g3, triggers, {}), base) << "beside an n-gram speculator, alone";
  EXPECT_EQ(run(*ngram, g3, triggers, {.one_at_a_time = false}), base)
      << "beside an n-gram speculator, all at once";
  const EngineStats s = ngram->engine().stats();
  std::printf("n-gram speculator: %llu drafts, %llu accepted\n",
              static_cast<unsigned long long>(s.spec.num_draft_tokens),
              static_cast<unsigned long long>(s.spec.num_accepted_tokens));
  EXPECT_GT(s.spec.num_accepted_tokens, 0u);
}

}  // namespace
}  // namespace plinth
