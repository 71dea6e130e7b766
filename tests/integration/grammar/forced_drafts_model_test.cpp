// Forced-token drafting on the real model (SmolLM2-135M, manifests/cpu_structured.json's
// numerics, the grammar plugin grammar_xgrammar) with a JSON Schema of long property names,
// whose names the grammar forces once their first byte is chosen:
//  - temperature 0: the token ids and finish reasons of each prompt are those of decoding
//    without drafts (requests with speculative = false), one request at a time, all at once,
//    with the prefix cache (twice: the second round hits it) and beside an n-gram speculator,
//    and those of the full sampler (logprobs asked: no masked-argmax shortcut);
//    alone, it takes fewer forwards (engine steps) and forced drafts are accepted, and over
//    90 % of them once the memo has seen those outputs (engine/forced_memo.hpp);
//  - a seeded sampled request gives the same tokens before and after the memo learned;
//  - temperature 1: the first sampled digit after forced text ("The answer is ") has the same
//    frequencies with forced drafts as without (chi-square homogeneity, p = 0.001).
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "app/engine_host.hpp"
#include "grammar_model_setup.hpp"
#include "runtime/host_context.hpp"
#include "runtime/logging.hpp"

namespace plinth {
namespace {

namespace fs = std::filesystem;
using grammar_model::load;

const char* const kSchema = R"({"type": "object", "properties": {
  "customer_full_legal_name": {"type": "string", "maxLength": 24},
  "customer_primary_email_address": {"type": "string", "maxLength": 32},
  "number_of_previous_orders_placed": {"type": "integer", "minimum": 0, "maximum": 1000},
  "preferred_delivery_time_window": {"type": "string", "enum": ["morning", "afternoon", "evening"]}},
  "required": ["customer_full_legal_name", "customer_primary_email_address",
               "number_of_previous_orders_placed", "preferred_delivery_time_window"],
  "additionalProperties": false})";

fs::path write_manifest(const std::string& name, bool prefix, bool ngram) {
  return grammar_model::write_manifest("plinth_forced_drafts", name, prefix, ngram);
}

struct Result {
  std::vector<int32_t> ids;
  std::string finish;
  bool operator==(const Result&) const = default;
};

struct RunResult {
  std::vector<Result> results;
  uint64_t steps = 0;  // engine steps (forwards) the run took
  EngineStats stats;
};

const std::vector<std::string> kAsks = {
    "Give me a customer record as JSON.",
    "Write a JSON record for a customer named Alice who ordered 3 times.",
    "Produce the JSON of a customer who prefers evening deliveries.",
    "Describe a new customer as JSON.",
};

// Runs every ask under the schema (greedy, max_tokens 200), one at a time or all at once;
// `forced` false sends them with speculative = false (no drafts of any kind); `logprobs` asks
// for logprobs, which takes each token through the full sampler (penalties, mask, softmax)
// instead of the masked argmax.
RunResult run(EngineHost& h, bool forced, bool one_at_a_time, bool logprobs = false) {
  GrammarSpec spec;
  spec.kind = PLINTH_GRAMMAR_JSON_SCHEMA;
  spec.spec = kSchema;
  spec.strict = true;
  const std::shared_ptr<CompiledGrammar> grammar = h.grammar().compile(spec);
  Engine& e = h.engine();
  const uint64_t steps_before = e.stats().num_steps;
  std::vector<uint64_t> ids;
  for (const std::string& ask : kAsks) {
    GenerationRequest g;
    g.prompt = h.encode_chat({{"user", ask}});
    g.params.temperature = 0.0f;
    g.params.max_tokens = 200;
    g.speculative = forced;
    g.logprobs = logprobs;
    g.grammar = grammar;
    ids.push_back(e.add_request(std::move(g)));
    while (one_at_a_time && e.has_unfinished()) e.step();
  }
  while (e.has_unfinished()) e.step();
  RunResult r;
  for (uint64_t id : ids) {
    const Sequence* s = e.find(id);
    r.results.push_back({{s->output().begin(), s->output().end()}, *s->finish_reason()});
    e.release(id);
  }
  r.stats = e.stats();
  r.steps = r.stats.num_steps - steps_before;
  return r;
}

class ForcedDraftsModel : public grammar_model::ModelTest {};

TEST_F(ForcedDraftsModel, GreedyIdsEqualDecodingWithoutDraftsInFewerForwards) {
  std::unique_ptr<EngineHost> h = load(host_, write_manifest("plain", false, false));
  const RunResult off = run(*h, /*forced=*/false, /*one_at_a_time=*/true);
  for (const Result& r : off.results) {
    std::printf("%s (%zu tokens, %s)\n", h->tokenizer().decode(r.ids).c_str(), r.ids.size(),
                r.finish.c_str());
    EXPECT_EQ(r.finish, "stop") << "a JSON record of four fields fits in 200 tokens";
  }
  EXPECT_EQ(off.stats.forced.num_draft_tokens, 0u) << "speculative = false drafts nothing";
  const RunResult on = run(*h, /*forced=*/true, /*one_at_a_time=*/true);
  EXPECT_EQ(on.results, off.results);
  const uint64_t drafted = on.stats.forced.num_draft_tokens;
  const uint64_t accepted = on.stats.forced.num_accepted_tokens;
  EXPECT_GT(accepted, 0u);
  EXPECT_LT(on.steps, off.steps) << "accepted forced drafts save forwards";
  std::printf(
      "forced drafting, alone: %llu forwards without, %llu with; %llu of %llu forced "
      "drafts accepted\n",
      static_cast<unsigned long long>(off.steps), static_cast<unsigned long long>(on.steps),
      static_cast<unsigned long long>(accepted), static_cast<unsigned long long>(drafted));

  // The same asks again: the memo now holds the target's spelling of every forced string of
  // those outputs, so (nearly) every forced draft is kept.
  const RunResult again = run(*h, /*forced=*/true, /*one_at_a_time=*/true);
  EXPECT_EQ(again.results, off.results) << "with the memo warm";
  const uint64_t drafted_again = again.stats.forced.num_draft_tokens - drafted;
  const uint64_t accepted_again = again.stats.forced.num_accepted_tokens - accepted;
  std::printf("again, memo warm: %llu forwards; %llu of %llu forced drafts accepted\n",
              static_cast<unsigned long long>(again.steps),
              static_cast<unsigned long long>(accepted_again),
              static_cast<unsigned long long>(drafted_again));
  EXPECT_LE(again.steps, on.steps);
  EXPECT_GT(accepted_again * 10, drafted_again * 9) << "over 90 % kept with the memo warm";

  EXPECT_EQ(run(*h, /*forced=*/false, /*one_at_a_time=*/true, /*logprobs=*/true).results,
            off.results)
      << "the masked argmax (greedy without logprobs) is the full sampler's token";
  EXPECT_EQ(run(*h, /*forced=*/true, /*one_at_a_time=*/false, /*logprobs=*/true).results,
            off.results)
      << "forced drafts verified through the full sampler (logprobs on), all at once";

  const RunResult batched = run(*h, /*forced=*/true, /*one_at_a_time=*/false);
  EXPECT_EQ(batched.results, off.results) << "all at once";
  h.reset();

  std::unique_ptr<EngineHost> cached = load(host_, write_manifest("prefix", true, false));
  for (int round = 0; round < 2; ++round) {
    SCOPED_TRACE(round == 0 ? "prefix cache, first round" : "prefix cache, second round (hits)");
    EXPECT_EQ(run(*cached, true, false).results, off.results);
  }
  cached.reset();

  std::unique_ptr<EngineHost> ngram = load(host_, write_manifest("ngram", false, true));
  const RunResult both = run(*ngram, /*forced=*/true, /*one_at_a_time=*/false);
  EXPECT_EQ(both.results, off.results) << "beside an n-gram speculator";
  EXPECT_GT(both.stats.forced.num_accepted_tokens, 0u);
}

TEST_F(ForcedDraftsModel, SeededSampledOutputDoesNotDependOnWhatTheMemoLearned) {
  // A seeded request at temperature 1 with forced drafts, before and after greedy requests under
  // the same schema taught the memo their spellings: the same tokens (its drafts, and so its
  // verification's draws, depend on its own state only).
  std::unique_ptr<EngineHost> h = load(host_, write_manifest("seeded", false, false));
  GrammarSpec spec;
  spec.kind = PLINTH_GRAMMAR_JSON_SCHEMA;
  spec.spec = kSchema;
  spec.strict = true;
  const std::shared_ptr<CompiledGrammar> grammar = h->grammar().compile(spec);
  Engine& e = h->engine();
  auto seeded = [&] {
    GenerationRequest g;
    g.prompt = h->encode_chat({{"user", kAsks[0]}});
    g.params.temperature = 1.0f;
    g.params.seed = 42;
    g.params.max_tokens = 120;
    g.grammar = grammar;
    const uint64_t id = e.add_request(std::move(g));
    while (e.has_unfinished()) e.step();
    const Sequence* s = e.find(id);
    std::vector<int32_t> ids(s->output().begin(), s->output().end());
    e.release(id);
    return ids;
  };
  const std::vector<int32_t> first = seeded();
  const uint64_t accepted_before = e.stats().forced.num_accepted_tokens;
  run(*h, /*forced=*/true, /*one_at_a_time=*/true);  // greedy: teaches the memo
  EXPECT_GT(e.stats().forced.num_accepted_tokens, accepted_before);
  EXPECT_EQ(seeded(), first);
}

// Chi-square critical value at p = 0.001 for `dof` degrees of freedom (Wilson–Hilferty).
double chi2_critical_001(int dof) {
  const double z = 3.090232;  // the standard normal's 0.999 quantile
  const double k = dof;
  return k * std::pow(1.0 - 2.0 / (9.0 * k) + z * std::sqrt(2.0 / (9.0 * k)), 3.0);
}

TEST_F(ForcedDraftsModel, SampledDigitFrequenciesAgreeWithDecodingWithoutDrafts) {
  // "The answer is " is forced once its first token is out; the digit after it is sampled at
  // the first position verification decides with forced drafts (the bonus token).
  std::unique_ptr<EngineHost> h = load(host_, write_manifest("sample", false, false));
  GrammarSpec spec;
  spec.kind = PLINTH_GRAMMAR_EBNF;
  spec.spec = R"(root ::= "The answer is " [0-9] ".")";
  const std::shared_ptr<CompiledGrammar> grammar = h->grammar().compile(spec);
  const std::vector<int32_t> prompt = h->encode_chat({{"user", "Pick a number from 0 to 9."}});
  const int kDraws = 480;
  auto histogram = [&](bool forced) {
    std::map<char, int> counts;
    for (int i = 0; i < kDraws;) {
      std::vector<uint64_t> ids;
      for (int j = 0; j < 16 && i < kDraws; ++j, ++i) {
        GenerationRequest g;
        g.prompt = prompt;
        g.share_prompt_with_previous = j > 0;
        g.params.temperature = 1.0f;
        g.params.seed = 5000 + i + (forced ? 1000000 : 0);
        g.params.max_tokens = 12;
        g.speculative = forced;
        g.grammar = grammar;
        ids.push_back(h->engine().add_request(std::move(g)));
      }
      while (h->engine().has_unfinished()) h->engine().step();
      for (uint64_t id : ids) {
        const std::string& text = h->engine().find(id)->text();
        EXPECT_EQ(text.rfind("The answer is ", 0), 0u) << text;
        counts[text.size() > 14 ? text[14] : '?']++;
        h->engine().release(id);
      }
    }
    return counts;
  };
  const uint64_t accepted_before = h->engine().stats().forced.num_accepted_tokens;
  const std::map<char, int> plain = histogram(false);
  EXPECT_EQ(h->engine().stats().forced.num_accepted_tokens, accepted_before);
  const std::map<char, int> forced = histogram(true);
  EXPECT_GT(h->engine().stats().forced.num_accepted_tokens, accepted_before);
  // Categories with >= 5 on each side; the rest pooled.
  std::map<char, std::pair<int, int>> cells;
  for (auto [c, n] : plain) cells[c].first = n;
  for (auto [c, n] : forced) cells[c].second = n;
  std::vector<std::pair<int, int>> table;
  std::pair<int, int> pooled{0, 0};
  for (auto [c, ab] : cells) {
    if (ab.first + ab.second >= 10) {
      table.push_back(ab);
    } else {
      pooled.first += ab.first;
      pooled.second += ab.second;
    }
  }
  if (pooled.first + pooled.second > 0) table.push_back(pooled);
  if (table.size() < 2) GTEST_SKIP() << "the model always picks the same digit";
  double chi2 = 0;
  const double n = 2.0 * kDraws;
  for (auto [a, b] : table) {
    const double row = a + b;
    for (int v : {a, b}) {
      const double expected = row * kDraws / n;
      chi2 += (v - expected) * (v - expected) / expected;
    }
  }
  const int dof = static_cast<int>(table.size()) - 1;
  EXPECT_LT(chi2, chi2_critical_001(dof)) << "chi2 " << chi2 << " with " << dof << " dof";
}

}  // namespace
}  // namespace plinth
