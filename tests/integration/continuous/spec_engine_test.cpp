// Speculative decoding end to end without a model: the real Engine driving kv_paged and
// scheduler_continuous (and prefix_radix) over the deterministic fake backend, whose every next
// token is computed from what it reads back through the block tables, with the oracle
// speculator (oracle_speculator.cpp): drafts are the fake model's continuation, wrong at chosen
// positions, verified by spec_decode's verification. A rejected draft whose KV slot were kept, a
// stale slot read back, a wrong bonus token or a miscounted KV length therefore shows up as a
// wrong token.
//
// Checked: thousands of random requests (stop tokens, aborts, preemption, prefix hits) give
// exactly the tokens and finish reasons of the same run without a speculator, and no KV block
// leaks; a stop token or stop string reached inside an accepted run ends the sequence there;
// max_tokens and the context end are never exceeded; seeded sampling is reproducible.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <random>
#include <string>
#include <vector>

#include "engine/engine.hpp"
#include "engine/grammar.hpp"
#include "fake_model.hpp"
#include "runtime/host_context.hpp"
#include "runtime/logging.hpp"
#include "runtime/manifest.hpp"
#include "runtime/pipeline.hpp"
#include "tokenizer/tokenizer.hpp"

namespace plinth {
namespace {

namespace fs = std::filesystem;
using fake_model::expected_output;
using fake_model::kVocab;

struct SpecSetup {
  bool speculator = true;
  bool abi10 = false;  // the oracle built against the frozen ABI 1.0 headers
  bool prefix_cache = false;
  uint32_t k = 4, wrong_every = 3;
  uint32_t num_blocks = 256, max_num_seqs = 16;
  std::string misbehave = "none";  // oracle_speculator breaks speculator.h for sequence bad_seq
  uint64_t bad_seq = 0;
  bool grammar = false;  // grammar_xgrammar over the tiny vocabulary, kGrammarStop its stop id
};

/// The grammar plugin's stop id in the tests with a grammar ('-').
constexpr int32_t kGrammarStop = 63;

class SpecEngine {
 public:
  explicit SpecEngine(const SpecSetup& c) {
    const fs::path dir = fs::path(PLINTH_BUILD_DIR) / "test_plugins";
    std::string text = R"({"plugins": [
      {"kind": "backend", "library": ")" +
                       (dir / "libplinth_fake_kv_backend.so").string() + R"("},
      {"kind": "kv_cache", "library": "kv_paged", "config": {"block_size": 4, "num_blocks": )" +
                       std::to_string(c.num_blocks) + "}},";
    if (c.prefix_cache) text += R"({"kind": "prefix_cache", "library": "prefix_radix"},)";
    text +=
        R"({"kind": "scheduler", "library": "scheduler_continuous", "config": {"max_num_seqs": )" +
        std::to_string(c.max_num_seqs) + R"(, "max_num_batched_tokens": 128}})";
    if (c.speculator) {
      text += R"(, {"kind": "speculator", "library": ")" +
              ((c.abi10 ? fs::path(PLINTH_BUILD_DIR) / "abi_1_0_plugins" : dir) /
               "libplinth_oracle_speculator.so")
                  .string() +
              R"(", "config": {"k": )" + std::to_string(c.k) + R"(, "wrong_every": )" +
              std::to_string(c.wrong_every) + R"(, "misbehave": ")" + c.misbehave +
              R"(", "bad_seq": )" + std::to_string(c.bad_seq) + "}}";
    }
    if (c.grammar) text += R"(, {"kind": "grammar", "library": "grammar_xgrammar"})";
    text += "]}";
    manifest_ = parse_manifest(text, fs::temp_directory_path() / "spec_engine.json");
    desc_ = fake_model::model_desc();
    pipeline_ = Pipeline::create(manifest_, &desc_, host_);
    if (c.grammar) start_grammar();
    BackendRef b = pipeline_->backend();
    plinth_error err{};
    EXPECT_EQ(b.vtable->allocate_kv(b.instance, c.num_blocks, 4, &err), PLINTH_OK);
    EnginePlugins p;
    p.backend = b;
    KvCacheRef kv = pipeline_->kv_cache();
    p.kv_cache = kv;
    SchedulerRef s = pipeline_->scheduler();
    p.scheduler = s;
    PrefixCacheRef pc = pipeline_->prefix_cache();
    p.prefix_cache = pc;
    SpeculatorRef sp = pipeline_->speculator();
    p.speculator = sp;
    p.speculator_abi_minor = pipeline_->abi_minor(PLINTH_KIND_SPECULATOR);
    p.names.speculator = "oracle_speculator";
    p.host_api = &pipeline_->plugin_host_api();
    EngineOptions eo;
    eo.context_length = 4096;
    eo.vocab_size = kVocab;
    engine_ = std::make_unique<Engine>(p, tokenizer_, eo);
  }
  ~SpecEngine() {
    engine_.reset();
    pipeline_.reset();
  }
  Engine& engine() { return *engine_; }
  const Tokenizer& tokenizer() const { return tokenizer_; }
  /// Compiles a regex through the grammar plugin (SpecSetup::grammar).
  std::shared_ptr<CompiledGrammar> regex(const std::string& pattern) const {
    GrammarSpec spec;
    spec.kind = PLINTH_GRAMMAR_REGEX;
    spec.spec = pattern;
    return GrammarCompiler(pipeline_->grammar(), "grammar_xgrammar").compile(spec);
  }

  /// Runs one request alone to the end.
  const Sequence& run(GenerationRequest g) {
    const uint64_t id = engine_->add_request(std::move(g));
    while (engine_->has_unfinished()) engine_->step();
    return *engine_->find(id);
  }

 private:
  void start_grammar() {
    std::vector<plinth_grammar_token> tokens;
    for (int32_t i = 0; i < static_cast<int32_t>(kVocab); ++i) {
      const std::string& bytes = tokenizer_.token_to_bytes(i);
      tokens.push_back({bytes.data(), static_cast<uint32_t>(bytes.size()), 1});
    }
    plinth_grammar_vocab vocab{};
    vocab.struct_size = sizeof vocab;
    vocab.vocab_size = kVocab;
    vocab.tokens = tokens.data();
    vocab.stop_ids = &kGrammarStop;
    vocab.num_stop_ids = 1;
    pipeline_->instantiate_grammar(vocab);
  }

  HostContext host_{make_stderr_logger(spdlog::level::warn)};
  Tokenizer tokenizer_ = fake_model::tiny_tokenizer();
  Manifest manifest_;
  plinth_model_desc desc_{};
  std::unique_ptr<Pipeline> pipeline_;
  std::unique_ptr<Engine> engine_;
};

std::vector<int32_t> tokens(uint32_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::vector<int32_t> t(n);
  for (int32_t& x : t) x = static_cast<int32_t>(rng() % kVocab);
  return t;
}

GenerationRequest greedy(std::vector<int32_t> prompt, int32_t max_tokens) {
  GenerationRequest g;
  g.prompt = std::move(prompt);
  g.params.temperature = 0.0f;
  g.params.max_tokens = max_tokens;
  g.params.ignore_eos = true;
  return g;
}

struct Outcome {
  std::vector<int32_t> output;
  std::string text, finish;
  bool operator==(const Outcome&) const = default;
};

// A random workload, drawn up front so that it is the same whatever the number of steps: requests
// arrive in bursts between steps, some share a prefix, some stop on a token, every 23rd is aborted
// when the request five after it arrives.
std::vector<Outcome> run_workload(SpecEngine& se, uint32_t num_requests, uint32_t seed) {
  Engine& e = se.engine();
  std::mt19937 rng(seed);
  const std::vector<int32_t> shared = tokens(24, seed + 1);  // prefix-cache hits
  std::vector<GenerationRequest> reqs;
  std::vector<uint32_t> bursts;
  for (uint32_t i = 0; i < num_requests; ++i) {
    std::vector<int32_t> prompt = tokens(1 + rng() % 40, seed * 7919 + i);
    if (rng() % 3 == 0) prompt.insert(prompt.begin(), shared.begin(), shared.end());
    GenerationRequest g = greedy(prompt, 1 + static_cast<int32_t>(rng() % 40));
    if (rng() % 4 == 0) g.params.stop_token_ids = {static_cast<int32_t>(rng() % kVocab)};
    reqs.push_back(std::move(g));
    bursts.push_back(rng() % 4);
  }
  std::vector<uint64_t> ids;
  size_t next = 0, tick = 0;
  while (next < reqs.size() || e.has_unfinished()) {
    for (uint32_t b = bursts[tick++ % bursts.size()]; b > 0 && next < reqs.size(); --b) {
      ids.push_back(e.add_request(reqs[next++]));
      if (ids.size() > 5 && (ids.size() - 6) % 23 == 0) e.abort_request(ids[ids.size() - 6]);
    }
    e.step();
  }
  std::vector<Outcome> out(ids.size());
  for (size_t i = 0; i < ids.size(); ++i) {
    const Sequence* s = e.find(ids[i]);
    out[i] = {{s->output().begin(), s->output().end()}, s->text(), *s->finish_reason()};
    e.release(ids[i]);
  }
  return out;
}

TEST(SpecEngine, RandomWorkloadMatchesPlainDecodingAndLeaksNothing) {
  for (bool prefix : {false, true}) {
    SCOPED_TRACE(prefix ? "with prefix_radix" : "without a prefix cache");
    SpecSetup plain_setup{.speculator = false, .prefix_cache = prefix, .num_blocks = 96};
    SpecSetup spec_setup{.speculator = true, .prefix_cache = prefix, .num_blocks = 96};
    SpecEngine plain(plain_setup), spec(spec_setup);
    const std::vector<Outcome> want = run_workload(plain, 1000, 5);
    const std::vector<Outcome> got = run_workload(spec, 1000, 5);
    ASSERT_EQ(got.size(), want.size());
    for (size_t i = 0; i < want.size(); ++i) {
      // Where an abort lands depends on the steps (a faster run may finish before it).
      if (want[i].finish == "abort" || got[i].finish == "abort") continue;
      ASSERT_EQ(got[i], want[i]) << "request " << i;
    }
    const EngineStats s = spec.engine().stats();
    EXPECT_GT(s.spec.num_accepted_tokens, 1000u);
    EXPECT_GT(s.spec.num_draft_tokens, s.spec.num_accepted_tokens) << "some drafts are rejected";
    EXPECT_GT(s.num_preemptions, 0u) << "the pool is meant to be small enough to preempt";
    EXPECT_LT(s.num_steps, plain.engine().stats().num_steps) << "accepted drafts save steps";
    // Nothing leaks: without a cache every block is free; with one only cached blocks remain.
    if (!prefix) {
      EXPECT_EQ(s.kv.num_used_blocks, 0u);
      EXPECT_EQ(s.kv.num_free_blocks, s.kv.num_blocks);
    }
  }
}

// A speculator built against ABI 1.0 is driven through the plain propose (4 slots, drafts clamped
// by the host) and gets its verify items at the 1.0 stride (56 bytes, not 1.2's 64): read at the
// wrong stride, every item after the first would be garbage. Greedy only.
TEST(SpecEngine, AnAbi10SpeculatorStillSpeculatesExactly) {
  SpecEngine plain(SpecSetup{.speculator = false, .num_blocks = 96});
  SpecEngine old(SpecSetup{.abi10 = true, .k = 6, .num_blocks = 96});
  const std::vector<Outcome> want = run_workload(plain, 300, 11);
  const std::vector<Outcome> got = run_workload(old, 300, 11);
  for (size_t i = 0; i < want.size(); ++i) {
    if (want[i].finish == "abort" || got[i].finish == "abort") continue;
    ASSERT_EQ(got[i], want[i]) << "request " << i;
  }
  const EngineStats s = old.engine().stats();
  EXPECT_GT(s.spec.num_accepted_tokens, 300u);
  EXPECT_LE(s.spec.accepted_per_position.size(), 4u) << "1.0 plugins get 4 draft slots";
}

// The prompt's continuation has no repeats among its first five tokens (so a stop on the third
// one is unambiguous).
std::vector<int32_t> prompt_with_distinct_continuation(uint32_t seed) {
  for (;; ++seed) {
    std::vector<int32_t> p = tokens(9, seed);
    std::vector<int32_t> c = expected_output(p, 5);
    std::vector<int32_t> sorted = c;
    std::sort(sorted.begin(), sorted.end());
    if (std::adjacent_find(sorted.begin(), sorted.end()) == sorted.end()) return p;
  }
}

TEST(SpecEngine, StopTokenInsideAnAcceptedRunEndsTheSequenceThere) {
  SpecEngine se(SpecSetup{.k = 5, .wrong_every = 0});  // every draft right
  const std::vector<int32_t> p = prompt_with_distinct_continuation(1);
  const std::vector<int32_t> want = expected_output(p, 5);
  GenerationRequest g = greedy(p, 5);
  g.params.stop_token_ids = {want[2]};
  const Sequence& s = se.run(g);
  EXPECT_EQ(std::vector<int32_t>(s.output().begin(), s.output().end()),
            std::vector<int32_t>(want.begin(), want.begin() + 3));
  EXPECT_EQ(*s.finish_reason(), "stop");
  // The stop token came inside the draft run: one prefill step and one verification step.
  EXPECT_EQ(se.engine().stats().num_steps, 2u);
  EXPECT_GE(se.engine().stats().spec.num_accepted_tokens, 2u);
  // Without the stop: exactly max_tokens, "length".
  const Sequence& s2 = se.run(greedy(p, 5));
  EXPECT_EQ(std::vector<int32_t>(s2.output().begin(), s2.output().end()), want);
  EXPECT_EQ(*s2.finish_reason(), "length");
}

TEST(SpecEngine, StopStringCompletedInsideAnAcceptedRun) {
  SpecEngine se(SpecSetup{.k = 6, .wrong_every = 0});
  const std::vector<int32_t> p = prompt_with_distinct_continuation(3);
  const std::vector<int32_t> want = expected_output(p, 8);
  const std::string text = se.tokenizer().decode(want);  // one character per token
  ASSERT_EQ(text.size(), 8u);
  GenerationRequest g = greedy(p, 8);
  g.params.stop = {text.substr(2, 2)};  // completed by the 4th token
  const Sequence& s = se.run(g);
  EXPECT_EQ(*s.finish_reason(), "stop");
  EXPECT_EQ(s.text(), text.substr(0, 2));
  EXPECT_EQ(s.output().size(), 4u) << "no token after the one completing the stop string";
  EXPECT_EQ(se.engine().stats().num_steps, 2u);
}

TEST(SpecEngine, DraftsNeverPassMaxTokensOrTheContextEnd) {
  SpecEngine se(SpecSetup{.k = 8, .wrong_every = 0, .num_blocks = 1100});
  for (int32_t max_tokens : {1, 2, 3, 9, 10, 17}) {
    const Sequence& s = se.run(greedy(tokens(5, 40 + max_tokens), max_tokens));
    EXPECT_EQ(s.output().size(), static_cast<size_t>(max_tokens));
    EXPECT_EQ(*s.finish_reason(), "length");
  }
  // Three positions left in the 4096-token context.
  const std::vector<int32_t> p = tokens(4093, 77);
  const Sequence& s = se.run(greedy(p, 50));
  EXPECT_EQ(std::vector<int32_t>(s.output().begin(), s.output().end()), expected_output(p, 3));
  EXPECT_EQ(*s.finish_reason(), "length");
}

TEST(SpecEngine, SeededSamplingIsReproducible) {
  // Verification at T = 1 draws its uniforms from the request's RNG: the same seed repeats
  // exactly, another seed (almost surely) does not.
  std::vector<std::vector<int32_t>> seeded;
  for (uint64_t seed : {1u, 2u}) {
    std::vector<std::vector<int32_t>> outs;
    for (int run = 0; run < 2; ++run) {
      SpecEngine se(SpecSetup{.k = 4, .wrong_every = 2});
      GenerationRequest g = greedy(tokens(12, 9), 30);
      g.params.temperature = 1.0f;
      g.params.seed = seed;
      const Sequence& s = se.run(g);
      outs.emplace_back(s.output().begin(), s.output().end());
    }
    EXPECT_EQ(outs[0], outs[1]);
    seeded.push_back(outs[0]);
  }
  EXPECT_NE(seeded[0], seeded[1]);
}

// A speculator that breaks speculator.h on one sequence fails that sequence alone, with an error
// naming the plugin and the rule (engine/contract_check.hpp); the sequences beside it finish with
// their plain greedy tokens, and no KV block leaks.
TEST(SpecEngine, ASpeculatorBreakingItsContractFailsOnlyItsSequence) {
  for (const char* mode : {"out_of_vocab", "too_many", "accept_past", "wrong_greedy"}) {
    SCOPED_TRACE(mode);
    SpecEngine se(SpecSetup{.k = 4, .wrong_every = 3, .misbehave = mode, .bad_seq = 2});
    std::vector<std::vector<int32_t>> prompts;
    std::vector<uint64_t> ids;
    for (uint32_t i = 0; i < 3; ++i) {
      prompts.push_back(tokens(7 + i, 100 + i));
      ids.push_back(se.engine().add_request(greedy(prompts.back(), 24)));
    }
    ASSERT_EQ(ids[1], 2u);
    while (se.engine().has_unfinished()) se.engine().step();
    for (size_t i = 0; i < ids.size(); ++i) {
      const Sequence& s = *se.engine().find(ids[i]);
      if (i == 1) {
        EXPECT_EQ(*s.finish_reason(), "error");
        EXPECT_NE(s.error().find("speculator 'oracle_speculator'"), std::string::npos) << s.error();
        EXPECT_NE(s.error().find("plinth/speculator.h"), std::string::npos) << s.error();
        EXPECT_NE(s.error().find("sequence 2"), std::string::npos) << s.error();
        EXPECT_TRUE(s.error_param().empty()) << "the plugin's fault, not the request's";
        continue;
      }
      EXPECT_EQ(*s.finish_reason(), "length") << s.error();
      EXPECT_EQ(std::vector<int32_t>(s.output().begin(), s.output().end()),
                expected_output(prompts[i], 24));
    }
    const EngineStats st = se.engine().stats();
    EXPECT_GT(st.spec.num_accepted_tokens, 0u) << "the others were speculated on";
    EXPECT_EQ(st.kv.num_used_blocks, 0u) << "the failed sequence's blocks are back";
  }
}

// A proposal that cannot be pinned on one sequence (an answer for more sequences than asked)
// fails the sequences asked for drafts that step; the engine serves the next request.
TEST(SpecEngine, AProposalOfTheWrongShapeFailsTheSequencesAskedAndTheEngineGoesOn) {
  SpecEngine se(SpecSetup{.k = 4, .wrong_every = 3, .misbehave = "wrong_count", .bad_seq = 1});
  const Sequence& bad = se.run(greedy(tokens(9, 5), 20));
  EXPECT_EQ(*bad.finish_reason(), "error");
  EXPECT_NE(bad.error().find("proposed drafts for 2 sequences when asked for 1"), std::string::npos)
      << bad.error();
  EXPECT_NE(bad.error().find("sequences asked for drafts in that step fail"), std::string::npos);
  const std::vector<int32_t> p = tokens(11, 6);
  const Sequence& good = se.run(greedy(p, 20));
  EXPECT_EQ(*good.finish_reason(), "length") << good.error();
  EXPECT_EQ(std::vector<int32_t>(good.output().begin(), good.output().end()),
            expected_output(p, 20));
  EXPECT_EQ(se.engine().stats().kv.num_used_blocks, 0u);
}

// A grammar armed by a trigger token (GenerationRequest::grammar_trigger) under speculation: the
// oracle drafts the fake model's continuation, so its drafts run through the trigger and past it;
// the engine cuts them before the trigger (a verified row after it would be unmasked, and the
// grammar would refuse what it allowed: the sequence would fail). 300 requests with their
// triggers at various places, all at once: the same ids and finishes with and without the
// speculator; before the trigger exactly the fake model's continuation, after it four letters
// ("[a-z]{4}": the one-hot logits' token where the mask allows it) and the stop id.
TEST(SpecEngine, GrammarTriggerCutsDraftsBeforeTheTrigger) {
  if (!fs::exists(fs::path(PLINTH_PLUGIN_DIR) / "libplinth_grammar_xgrammar.so")) {
    GTEST_SKIP() << "grammar_xgrammar is not built";
  }
  SpecEngine plain(SpecSetup{.speculator = false, .num_blocks = 512, .grammar = true});
  SpecEngine spec(SpecSetup{.k = 5, .wrong_every = 4, .num_blocks = 512, .grammar = true});
  struct Case {
    std::vector<int32_t> prompt, before;  // before: the continuation up to the trigger
  };
  std::vector<Case> cases;
  for (uint32_t seed = 0; cases.size() < 300; ++seed) {
    const std::vector<int32_t> prompt = tokens(1 + seed % 20, 1000 + seed);
    const std::vector<int32_t> cont = expected_output(prompt, 24);
    for (size_t k = 1 + seed % 10; k < cont.size(); ++k) {
      if (std::count(cont.begin(), cont.begin() + static_cast<std::ptrdiff_t>(k + 1), cont[k]) ==
              1 &&
          std::count(cont.begin(), cont.begin() + static_cast<std::ptrdiff_t>(k + 1),
                     kGrammarStop) == 0) {
        cases.push_back(
            {prompt, {cont.begin(), cont.begin() + static_cast<std::ptrdiff_t>(k + 1)}});
        break;
      }
    }
  }
  auto run_all = [&](SpecEngine& se) {
    const std::shared_ptr<CompiledGrammar> grammar = se.regex("[a-z]{4}");
    Engine& e = se.engine();
    std::vector<uint64_t> ids;
    for (const Case& c : cases) {
      GenerationRequest g = greedy(c.prompt, 40);
      g.params.stop_token_ids = {kGrammarStop};
      g.grammar = grammar;
      g.grammar_trigger = c.before.back();
      ids.push_back(e.add_request(std::move(g)));
    }
    while (e.has_unfinished()) e.step();
    std::vector<Outcome> out;
    for (uint64_t id : ids) {
      const Sequence* s = e.find(id);
      out.push_back({{s->output().begin(), s->output().end()}, s->text(), *s->finish_reason()});
      e.release(id);
    }
    return out;
  };
  const std::vector<Outcome> want = run_all(plain);
  const std::vector<Outcome> got = run_all(spec);
  for (size_t i = 0; i < cases.size(); ++i) {
    SCOPED_TRACE("request " + std::to_string(i));
    const std::vector<int32_t>& before = cases[i].before;
    ASSERT_EQ(want[i].finish, "stop");
    ASSERT_EQ(want[i].output.size(), before.size() + 5);
    EXPECT_TRUE(std::equal(before.begin(), before.end(), want[i].output.begin()));
    for (size_t j = before.size(); j < before.size() + 4; ++j) {
      EXPECT_LT(want[i].output[j], 26) << "a lowercase letter";
    }
    EXPECT_EQ(want[i].output.back(), kGrammarStop);
    EXPECT_EQ(got[i], want[i]) << "with the speculator";
  }
  const EngineStats s = spec.engine().stats();
  EXPECT_GT(s.spec.num_accepted_tokens, 300u) << "the dormant sequences were speculated on";
}

}  // namespace
}  // namespace plinth
