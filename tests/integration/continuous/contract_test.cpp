// The engine notices a plugin that breaks its per-step contract (docs/architecture.md, "When a
// plugin breaks its contract"; engine/contract_check.hpp): a scheduler naming a sequence that is
// not running, a kv_cache whose block table points outside the pool, a backend with too few or no
// logits rows. Each fails only the requests it touched, with an error naming the plugin and the
// rule; the other requests complete with the fake model's exact continuation, a later request is
// served, and every KV block is back in the pool. A non-finite logits row (the model's, or one a
// request's repetition_penalty drives there) fails that request alone the same way. The
// misbehaving plugins are in tests/plugins/misbehaving.
#include <gtest/gtest.h>

#include <filesystem>
#include <map>
#include <memory>
#include <string>
#include <tuple>
#include <vector>

#include "engine/engine.hpp"
#include "fake_model.hpp"
#include "runtime/host_context.hpp"
#include "runtime/logging.hpp"
#include "runtime/manifest.hpp"
#include "runtime/pipeline.hpp"

namespace plinth {
namespace {

namespace fs = std::filesystem;

std::string test_plugin(const std::string& name) {
  return (fs::path(PLINTH_BUILD_DIR) / "test_plugins" / ("libplinth_" + name + ".so")).string();
}

/// One manifest entry: {"kind": kind, "library": library, "config": config}.
std::string entry(const std::string& kind, const std::string& library, const std::string& config) {
  return R"({"kind": ")" + kind + R"(", "library": ")" + library + R"(", "config": )" + config +
         "}";
}

const std::string kPool = R"({"block_size": 4, "num_blocks": 32})";

/// What a request ended with.
struct Outcome {
  std::vector<int32_t> tokens;
  std::string finish_reason, error, error_param;
};

/// The engine over a pipeline of three plugins, wired like EngineHost does (names included).
class Rig {
 public:
  Rig(const std::string& backend, const std::string& kv_cache, const std::string& scheduler)
      : host_(make_stderr_logger(spdlog::level::warn)), tokenizer_(fake_model::tiny_tokenizer()) {
    const std::string text =
        R"({"plugins": [)" + backend + ", " + kv_cache + ", " + scheduler + "]}";
    const Manifest manifest =
        parse_manifest(text, fs::temp_directory_path() / "engine_contract.json");
    desc_ = fake_model::model_desc();
    pipeline_ = Pipeline::create(manifest, &desc_, host_);
    BackendRef b = pipeline_->backend();
    kv_ = pipeline_->kv_cache();
    plinth_error err{};
    info_.struct_size = sizeof(info_);
    EXPECT_EQ(kv_.vtable->get_info(kv_.instance, &info_, &err), PLINTH_OK);
    EXPECT_EQ(b.vtable->allocate_kv(b.instance, info_.num_blocks, info_.block_size, &err),
              PLINTH_OK);
    EnginePlugins p;
    p.backend = b;
    p.kv_cache = kv_;
    SchedulerRef s = pipeline_->scheduler();
    p.scheduler = s;
    p.names.backend = pipeline_->plugin(PLINTH_KIND_BACKEND)->entry.name;
    p.names.kv_cache = pipeline_->plugin(PLINTH_KIND_KV_CACHE)->entry.name;
    p.names.scheduler = pipeline_->plugin(PLINTH_KIND_SCHEDULER)->entry.name;
    EngineOptions eo;
    eo.context_length = 4096;
    eo.vocab_size = fake_model::kVocab;
    engine_ = std::make_unique<Engine>(p, tokenizer_, eo);
  }

  Engine& engine() { return *engine_; }

  /// A greedy request; `logprobs` makes the host ask for logits rows (not argmax ids alone).
  uint64_t add(std::vector<int32_t> prompt, int max_tokens, bool logprobs = false) {
    GenerationRequest g;
    g.prompt = std::move(prompt);
    g.params.temperature = 0.0f;
    g.params.max_tokens = max_tokens;
    g.logprobs = logprobs;
    return engine_->add_request(g);
  }

  /// A request with these sampling parameters.
  uint64_t add(std::vector<int32_t> prompt, const SamplingParams& params) {
    GenerationRequest g;
    g.prompt = std::move(prompt);
    g.params = params;
    return engine_->add_request(g);
  }

  /// Steps until nothing is unfinished (at most 1000 steps); what each request ended with.
  std::map<uint64_t, Outcome> run() {
    for (int i = 0; i < 1000 && engine_->has_unfinished(); ++i) step();
    EXPECT_FALSE(engine_->has_unfinished()) << "requests still unfinished after 1000 steps";
    return outcomes_;
  }
  /// One step, its news recorded.
  void step() {
    for (const RequestOutput& o : engine_->step()) {
      Outcome& r = outcomes_[o.request_id];
      r.tokens.insert(r.tokens.end(), o.new_token_ids.begin(), o.new_token_ids.end());
      if (o.finished) {
        r.finish_reason = o.finish_reason;
        r.error = o.error;
        r.error_param = o.error_param;
      }
    }
  }

  /// Free blocks of the pool, from the kv_cache plugin itself.
  uint32_t free_blocks() const {
    plinth_kv_stats s{};
    s.struct_size = sizeof(s);
    plinth_error err{};
    EXPECT_EQ(kv_.vtable->get_stats(kv_.instance, &s, &err), PLINTH_OK);
    return s.num_free_blocks;
  }
  uint32_t num_blocks() const { return info_.num_blocks; }

 private:
  HostContext host_;
  Tokenizer tokenizer_;
  plinth_model_desc desc_{};
  std::unique_ptr<Pipeline> pipeline_;
  KvCacheRef kv_;
  plinth_kv_info info_{};
  std::unique_ptr<Engine> engine_;
  std::map<uint64_t, Outcome> outcomes_;
};

void expect_contains(const std::string& what, const std::string& part) {
  EXPECT_NE(what.find(part), std::string::npos) << "'" << part << "' not in: " << what;
}

void expect_completed(const Outcome& o, const std::vector<int32_t>& expected) {
  EXPECT_EQ(o.finish_reason, "length") << o.error;
  EXPECT_TRUE(o.error.empty()) << o.error;
  EXPECT_EQ(o.tokens, expected);
}

const std::string kFakeBackend = entry("backend", test_plugin("fake_kv_backend"), "{}");
const std::string kKvPaged = entry("kv_cache", "kv_paged", kPool);

TEST(EngineContract, ASchedulerNamingAnUnknownSequenceFailsOnlyThatStep) {
  // One sequence at a time: the first decision runs request 1 and names sequence 999999; request
  // 2 waits meanwhile and must be untouched.
  Rig rig(kFakeBackend, kKvPaged,
          entry("scheduler", test_plugin("bad_sched_unknown"),
                R"({"at_step": 1, "inner": {"max_num_seqs": 1}})"));
  const std::vector<int32_t> p1 = {1, 2, 3}, p2 = {4, 5, 6, 7, 8};
  const uint64_t a = rig.add(p1, 6), b = rig.add(p2, 6);
  std::map<uint64_t, Outcome> out = rig.run();
  EXPECT_EQ(out[a].finish_reason, "error");
  EXPECT_TRUE(out[a].tokens.empty());
  expect_contains(out[a].error,
                  "scheduler 'bad_sched_unknown' scheduled sequence 999999, which is not running");
  expect_contains(out[a].error, "plinth/scheduler.h");
  expect_completed(out[b], fake_model::expected_output(p2, 6));
  EXPECT_EQ(rig.free_blocks(), rig.num_blocks());

  const uint64_t c = rig.add(p1, 5);  // the engine serves on
  expect_completed(rig.run()[c], fake_model::expected_output(p1, 5));
  EXPECT_EQ(rig.free_blocks(), rig.num_blocks());
}

TEST(EngineContract, ASchedulerNamingAFinishedSequenceFailsOnlyThatStep) {
  // Request 1 finishes after one token; the next decision runs request 2 and names sequence 1
  // again. Request 3 waits meanwhile (one sequence at a time) and must be untouched.
  Rig rig(
      kFakeBackend, kKvPaged,
      entry("scheduler", test_plugin("bad_sched_finished"), R"({"inner": {"max_num_seqs": 1}})"));
  const std::vector<int32_t> p1 = {1, 2, 3}, p2 = {9, 8, 7}, p3 = {4, 5, 6, 7};
  const uint64_t a = rig.add(p1, 1), b = rig.add(p2, 6), c = rig.add(p3, 6);
  std::map<uint64_t, Outcome> out = rig.run();
  expect_completed(out[a], fake_model::expected_output(p1, 1));
  EXPECT_EQ(out[b].finish_reason, "error");
  expect_contains(out[b].error, "scheduler 'bad_sched_finished' scheduled sequence " +
                                    std::to_string(a) + ", which is not running (it finished");
  expect_contains(out[b].error, "plinth/scheduler.h");
  expect_completed(out[c], fake_model::expected_output(p3, 6));
  EXPECT_EQ(rig.free_blocks(), rig.num_blocks());

  const uint64_t d = rig.add(p2, 4);
  expect_completed(rig.run()[d], fake_model::expected_output(p2, 4));
  EXPECT_EQ(rig.free_blocks(), rig.num_blocks());
}

class EngineContractKv : public ::testing::TestWithParam<const char*> {};

TEST_P(EngineContractKv, ABlockTableOutsideThePoolFailsOnlyItsSequence) {
  // Sequence 1's block table is corrupted; sequence 2 runs in the same batches and must complete.
  const std::string mode = GetParam();
  Rig rig(kFakeBackend,
          entry("kv_cache", test_plugin("bad_kv_outside_pool"),
                R"({"seq": 1, "mode": ")" + mode + R"(", "inner": )" + kPool + "}"),
          entry("scheduler", "scheduler_continuous", "{}"));
  const std::vector<int32_t> p1 = {1, 2, 3, 4, 5, 6}, p2 = {7, 8, 9};
  const uint64_t a = rig.add(p1, 5), b = rig.add(p2, 7);
  ASSERT_EQ(a, 1u);
  rig.step();  // both prefill in one batch: sequence 1 fails there, sequence 2 runs
  std::map<uint64_t, Outcome> out = rig.run();
  EXPECT_EQ(out[a].finish_reason, "error");
  expect_contains(out[a].error, "kv_cache 'bad_kv_outside_pool' gave sequence 1 ");
  expect_contains(out[a].error, "plinth/kv_cache.h");
  expect_contains(out[a].error, mode == "too_few" ? "1 blocks of 4 tokens for 6 scheduled positions"
                                : mode == "negative" ? "is block -1, outside the pool"
                                                     : "is block 32, outside the pool");
  expect_completed(out[b], fake_model::expected_output(p2, 7));
  EXPECT_EQ(rig.free_blocks(), rig.num_blocks());

  const uint64_t c = rig.add(p1, 5);
  expect_completed(rig.run()[c], fake_model::expected_output(p1, 5));
  EXPECT_EQ(rig.free_blocks(), rig.num_blocks());
}

INSTANTIATE_TEST_SUITE_P(Modes, EngineContractKv,
                         ::testing::Values("past_end", "negative", "too_few"));

/// test_backend's model: the token after t is (t + 1) % vocab.
std::vector<int32_t> successor_output(const std::vector<int32_t>& prompt, int max_tokens) {
  std::vector<int32_t> out;
  int32_t t = prompt.back();
  for (int i = 0; i < max_tokens; ++i) out.push_back(t = (t + 1) % int32_t(fake_model::kVocab));
  return out;
}

class EngineContractBackend : public ::testing::TestWithParam<const char*> {};

TEST_P(EngineContractBackend, BrokenLogitsFailTheBatchAndTheEngineServesOn) {
  // A batch holding token 63 gets a broken output: its sequences fail, all of them.
  const std::string name = GetParam();
  Rig rig(entry("backend", test_plugin(name), R"({"trigger_token": 63})"), kKvPaged,
          entry("scheduler", "scheduler_continuous", "{}"));
  const std::vector<int32_t> bad = {1, 63, 2}, good = {10, 11, 12};
  // One batch; logprobs: the host asks for logits rows, not argmax ids alone.
  const uint64_t a = rig.add(bad, 4, true), b = rig.add(good, 4);
  std::map<uint64_t, Outcome> out = rig.run();
  for (uint64_t id : {a, b}) {
    EXPECT_EQ(out[id].finish_reason, "error");
    expect_contains(out[id].error, "backend '" + name + "' returned ");
    expect_contains(out[id].error, "plinth/backend.h");
    expect_contains(out[id].error, "the 2 sequences of that batch fail");
  }
  expect_contains(out[a].error, name == "bad_backend_few_logits"
                                    ? "returned 1 logits rows for a batch that asked for 2"
                                    : "returned no logits for 2 rows");
  EXPECT_EQ(rig.free_blocks(), rig.num_blocks());

  const uint64_t c = rig.add(good, 5);
  expect_completed(rig.run()[c], successor_output(good, 5));
  EXPECT_EQ(rig.free_blocks(), rig.num_blocks());
}

TEST_P(EngineContractBackend, ARequestWaitingOutsideTheBrokenBatchIsUntouched) {
  const std::string name = GetParam();
  Rig rig(entry("backend", test_plugin(name), R"({"trigger_token": 63})"), kKvPaged,
          entry("scheduler", "scheduler_continuous", R"({"max_num_seqs": 1})"));
  const std::vector<int32_t> bad = {1, 63, 2}, good = {10, 11, 12};
  const uint64_t a = rig.add(bad, 4), b = rig.add(good, 4);
  std::map<uint64_t, Outcome> out = rig.run();
  EXPECT_EQ(out[a].finish_reason, "error");
  expect_contains(out[a].error, "the 1 sequences of that batch fail");
  if (name == "bad_backend_null_logits") {  // greedy alone: argmax ids would have done
    expect_contains(out[a].error, "returned no logits and no argmax_ids for 1 rows");
  }
  expect_completed(out[b], successor_output(good, 4));
  EXPECT_EQ(rig.free_blocks(), rig.num_blocks());
}

INSTANTIATE_TEST_SUITE_P(Plugins, EngineContractBackend,
                         ::testing::Values("bad_backend_few_logits", "bad_backend_null_logits"));

// A non-finite logits row (the model's NaN / +inf, or the request's own sampling parameter) fails
// that request alone: its KV is freed, the other sequences of the same batches finish with their
// exact tokens. Parameters: the value written, and whether the backend also returns argmax ids
// (then a greedy request takes the id -1 instead of the logits row).
class EngineNonFinite : public ::testing::TestWithParam<std::tuple<const char*, bool>> {};

TEST_P(EngineNonFinite, AModelsNonFiniteRowFailsOnlyItsSequence) {
  const auto [value, argmax_ids] = GetParam();
  const std::string config = std::string(R"({"trigger_token": 63, "value": ")") + value +
                             R"(", "argmax_ids": )" + (argmax_ids ? "true" : "false") + "}";
  Rig rig(entry("backend", test_plugin("bad_backend_nan_logits"), config), kKvPaged,
          entry("scheduler", "scheduler_continuous", "{}"));
  // bad generates 61, 62, 63, and the row of token 63 is non-finite; the others never see 63.
  const std::vector<int32_t> bad = {1, 2, 60}, good1 = {10, 11, 12}, good2 = {20, 21};
  const uint64_t a = rig.add(good1, 6), b = rig.add(bad, 6), c = rig.add(good2, 7);
  std::map<uint64_t, Outcome> out = rig.run();
  EXPECT_EQ(out[b].finish_reason, "error");
  EXPECT_EQ(out[b].tokens, (std::vector<int32_t>{61, 62, 63}));
  EXPECT_EQ(out[b].error_param, "");  // the model's fault, not the request's
  expect_contains(out[b].error, "sequence " + std::to_string(b) + ", after 3 generated tokens: ");
  expect_contains(out[b].error, argmax_ids                    ? "argmax id -1"
                                : std::string(value) == "nan" ? "logits[0] is nan"
                                                              : "logits[0] is inf");
  expect_contains(out[b].error, "the model produced a non-finite value");
  expect_contains(out[b].error, "(backend 'bad_backend_nan_logits')");
  expect_completed(out[a], successor_output(good1, 6));
  expect_completed(out[c], successor_output(good2, 7));
  EXPECT_EQ(rig.free_blocks(), rig.num_blocks());

  const uint64_t d = rig.add(good1, 5);  // the engine serves on
  expect_completed(rig.run()[d], successor_output(good1, 5));
  EXPECT_EQ(rig.free_blocks(), rig.num_blocks());
}

INSTANTIATE_TEST_SUITE_P(Values, EngineNonFinite,
                         ::testing::Combine(::testing::Values("nan", "inf"), ::testing::Bool()));

TEST(EngineNonFiniteParam, ARepetitionPenaltyOverflowingALogitFailsThatRequestNamingIt) {
  // test_backend's row of token 7 is 1 at token 8, 0 elsewhere; 8 is in the prompt, so a
  // repetition_penalty of 1e-39 (valid: > 0) divides 1 by it: 1e39 > FLT_MAX, +inf.
  Rig real(entry("backend", test_plugin("test_backend"), "{}"), kKvPaged,
           entry("scheduler", "scheduler_continuous", "{}"));
  SamplingParams p;
  p.temperature = 0.0f;
  p.max_tokens = 4;
  p.repetition_penalty = 1e-39f;
  const std::vector<int32_t> bad = {8, 7}, good = {30, 31};
  const uint64_t a = real.add(good, 5), b = real.add(bad, p);
  std::map<uint64_t, Outcome> out = real.run();
  EXPECT_EQ(out[b].finish_reason, "error");
  EXPECT_TRUE(out[b].tokens.empty());
  EXPECT_EQ(out[b].error_param, "repetition_penalty");
  expect_contains(out[b].error, "repetition_penalty = 1e-39 turns the logit 1 of token 8 into inf");
  expect_contains(out[b].error, "use a repetition_penalty closer to 1");
  expect_completed(out[a], successor_output(good, 5));
  EXPECT_EQ(real.free_blocks(), real.num_blocks());
}

}  // namespace
}  // namespace plinth
