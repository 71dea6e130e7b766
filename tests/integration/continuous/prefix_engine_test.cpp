// Prefix caching end to end without a model: the real Engine driving kv_paged, prefix_radix and
// scheduler_continuous (loaded from a manifest) over the deterministic fake backend with a
// token-per-slot KV cache (fake_kv_backend.cpp), which computes each next token from what it
// reads back through the block table. A wrongly shared, stale or evicted-but-still-used block
// therefore shows up as a wrong token.
//
// Checked: the exact reuse rules (whole blocks only; a one-token difference inside block 2 reuses
// block 1 alone; different cache_salt values share nothing; a fully cached prompt still computes
// its last token; generated tokens of a finished turn are reused by the next turn; n > 1 forks
// the prompt instead of computing it) and, over thousands of random operations on small pools
// with shared prefixes, salts, n > 1 and aborts: every output equals the fake model's, eviction
// and preemption both happened, and at the end the only blocks in use are the cache's.
#include <gtest/gtest.h>

#include <filesystem>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "engine/engine.hpp"
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
using fake_model::tiny_tokenizer;

struct PoolSetup {
  const char* name;
  uint32_t block_size, num_blocks, max_num_seqs, max_num_batched_tokens;
  const char* policy;
};

std::ostream& operator<<(std::ostream& o, const PoolSetup& s) {
  return o << s.name;
}

class PrefixEngine : public ::testing::TestWithParam<PoolSetup> {
 protected:
  void SetUp() override { build(GetParam()); }
  void TearDown() override {
    engine_.reset();
    pipeline_.reset();
  }

  void build(const PoolSetup& c) {
    engine_.reset();
    pipeline_.reset();
    const fs::path lib = fs::path(PLINTH_BUILD_DIR) / "test_plugins/libplinth_fake_kv_backend.so";
    const std::string text =
        R"({"plugins": [
      {"kind": "backend", "library": ")" +
        lib.string() + R"("},
      {"kind": "kv_cache", "library": "kv_paged", "config": {"block_size": )" +
        std::to_string(c.block_size) + R"(, "num_blocks": )" + std::to_string(c.num_blocks) +
        R"(}},
      {"kind": "prefix_cache", "library": "prefix_radix"},
      {"kind": "scheduler", "library": "scheduler_continuous", "config": {"max_num_seqs": )" +
        std::to_string(c.max_num_seqs) + R"(, "max_num_batched_tokens": )" +
        std::to_string(c.max_num_batched_tokens) + R"(, "policy": ")" + c.policy + R"("}}]})";
    manifest_ = parse_manifest(text, fs::temp_directory_path() / "prefix_engine.json");
    desc_ = fake_model::model_desc();
    pipeline_ = Pipeline::create(manifest_, &desc_, host_);
    BackendRef b = pipeline_->backend();
    plinth_error err{};
    ASSERT_EQ(b.vtable->allocate_kv(b.instance, c.num_blocks, c.block_size, &err), PLINTH_OK);
    EnginePlugins p;
    p.backend = b;
    KvCacheRef kv = pipeline_->kv_cache();
    p.kv_cache = kv;
    SchedulerRef s = pipeline_->scheduler();
    p.scheduler = s;
    PrefixCacheRef pc = pipeline_->prefix_cache();
    p.prefix_cache = pc;
    p.host_api = &pipeline_->plugin_host_api();
    EngineOptions eo;
    eo.context_length = 4096;
    eo.vocab_size = kVocab;
    engine_ = std::make_unique<Engine>(p, tokenizer_, eo);
  }

  plinth_prefix_stats prefix_stats() const {
    PrefixCacheRef pc = pipeline_->prefix_cache();
    plinth_prefix_stats s{};
    s.struct_size = sizeof(s);
    plinth_error err{};
    EXPECT_EQ(pc.vtable->get_stats(pc.instance, &s, &err), PLINTH_OK);
    return s;
  }

  /// Runs one greedy request alone; returns its output and the tokens the backend computed.
  std::pair<std::vector<int32_t>, uint64_t> run(const std::vector<int32_t>& prompt,
                                                uint32_t max_tokens, const std::string& salt = "",
                                                bool bypass = false) {
    GenerationRequest g;
    g.bypass_prefix_cache = bypass;
    g.prompt = prompt;
    g.params.temperature = 0.0f;
    g.params.max_tokens = static_cast<int32_t>(max_tokens);
    g.params.ignore_eos = true;
    g.cache_salt = salt;
    const uint64_t before = engine_->stats().num_computed_tokens;
    const uint64_t id = engine_->add_request(g);
    while (engine_->has_unfinished()) engine_->step();
    const Sequence* s = engine_->find(id);
    std::vector<int32_t> out(s->output().begin(), s->output().end());
    engine_->release(id);
    return {out, engine_->stats().num_computed_tokens - before};
  }

  HostContext host_{make_stderr_logger(spdlog::level::warn)};
  Tokenizer tokenizer_ = tiny_tokenizer();
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

TEST_P(PrefixEngine, ReuseRules) {
  const uint32_t bs = GetParam().block_size;
  // 4 blocks + 3 tokens, 6 generated: cold computes everything.
  const std::vector<int32_t> a = tokens(4 * bs + 3, 1);
  auto [out_a, cold] = run(a, 6);
  EXPECT_EQ(out_a, expected_output(a, 6));
  EXPECT_EQ(cold, a.size() + 5);
  // The same prompt again: its 4 full blocks come from the cache.
  auto [out_a2, warm] = run(a, 6);
  EXPECT_EQ(out_a2, out_a);
  EXPECT_EQ(warm, cold - 4 * bs);
  // One token different inside block 2: only block 1 is reused.
  std::vector<int32_t> b = a;
  b[bs + 1] = (b[bs + 1] + 1) % static_cast<int32_t>(kVocab);
  auto [out_b, computed_b] = run(b, 6);
  EXPECT_EQ(out_b, expected_output(b, 6));
  EXPECT_EQ(computed_b, cold - bs);
  // A request that bypasses the cache neither matches nor inserts: a new prompt run so twice is
  // computed in full both times, and the cache holds no more blocks than before.
  const std::vector<int32_t> c = tokens(3 * bs + 1, 99);
  const uint32_t cached_before = prefix_stats().num_cached_blocks;
  EXPECT_EQ(run(c, 6, "", /*bypass=*/true).second, c.size() + 5);
  EXPECT_EQ(prefix_stats().num_cached_blocks, cached_before);
  EXPECT_EQ(run(c, 6, "", /*bypass=*/true).second, c.size() + 5);
  EXPECT_EQ(run(c, 6).second, c.size() + 5);  // nothing of c was cached by the bypassing runs
  // Another cache_salt shares nothing, and the salted run is cached within its own salt.
  auto [out_s, computed_s] = run(a, 6, "tenant-2");
  EXPECT_EQ(out_s, out_a);
  EXPECT_EQ(computed_s, cold);
  EXPECT_EQ(run(a, 6, "tenant-2").second, cold - 4 * bs);
  // A prompt of exactly 3 full blocks, all cached: 2 blocks reused, the last block computed, so
  // its last token has logits and the first output token is right.
  const std::vector<int32_t> exact(a.begin(), a.begin() + 3 * bs);
  auto [out_e, computed_e] = run(exact, 4);
  EXPECT_EQ(out_e, expected_output(exact, 4));
  EXPECT_EQ(computed_e, bs + 3);
  // Multi-turn: turn 2 resends turn 1's prompt and answer; the blocks holding the generated
  // tokens of turn 1 are reused too.
  const std::vector<int32_t> t1 = tokens(2 * bs + 1, 7);
  auto [ans1, c1] = run(t1, 2 * bs);
  std::vector<int32_t> t2 = t1;
  t2.insert(t2.end(), ans1.begin(), ans1.end());
  const std::vector<int32_t> follow_up = tokens(3, 8);
  t2.insert(t2.end(), follow_up.begin(), follow_up.end());
  const uint32_t cached_turn1 = static_cast<uint32_t>(t1.size() + ans1.size() - 1) / bs * bs;
  auto [ans2, c2] = run(t2, 5);
  EXPECT_EQ(ans2, expected_output(t2, 5));
  EXPECT_EQ(c2, t2.size() - cached_turn1 + 4);
  EXPECT_GE(cached_turn1, 3 * bs) << "turn 1's answer was meant to fill a block";
  (void)c1;
}

TEST_P(PrefixEngine, ParallelChoicesForkThePrompt) {
  const uint32_t bs = GetParam().block_size;
  const std::vector<int32_t> p = tokens(3 * bs + 2, 11);
  std::vector<uint64_t> ids;
  const uint64_t before = engine_->stats().num_computed_tokens;
  for (int i = 0; i < 3; ++i) {
    GenerationRequest g;
    g.prompt = p;
    g.params.temperature = 0.0f;
    g.params.max_tokens = 5;
    g.params.ignore_eos = true;
    g.cache_salt = "fork-test";  // nothing cached under this salt: only forking can share
    g.share_prompt_with_previous = i > 0;
    ids.push_back(engine_->add_request(g));
  }
  while (engine_->has_unfinished()) engine_->step();
  for (uint64_t id : ids) {
    const Sequence* s = engine_->find(id);
    EXPECT_EQ(std::vector<int32_t>(s->output().begin(), s->output().end()), expected_output(p, 5));
  }
  // The parent computes the prompt; each child only its last prompt token; then 4 decodes each.
  EXPECT_EQ(engine_->stats().num_computed_tokens - before, p.size() + 2 * 1 + 3 * 4);
}

struct Tracked {
  std::vector<int32_t> prompt;
  uint32_t max_tokens = 0;
  bool abort_requested = false;
};

TEST_P(PrefixEngine, RandomSharedPrefixesKeepOutputsAndBlocksExact) {
  const PoolSetup& c = GetParam();
  Engine& engine = *engine_;
  std::mt19937 rng(777u + c.block_size);
  auto uni = [&](uint32_t lo, uint32_t hi) {
    return std::uniform_int_distribution<uint32_t>(lo, hi)(rng);
  };
  // Three "system prompts" of 2..5 blocks; each request is one of them + a short question, under
  // one of two salts; some are n = 2 or 3 choices.
  std::vector<std::vector<int32_t>> systems;
  for (uint32_t i = 0; i < 3; ++i) systems.push_back(tokens(c.block_size * (2 + i) + i, 100 + i));
  std::map<uint64_t, Tracked> req;
  std::vector<uint64_t> live;
  uint64_t max_evictable = 0;
  for (int op = 0; op < 3000; ++op) {
    const uint32_t r = uni(0, 99);
    if (r < 20 && live.size() < 3 * c.max_num_seqs) {
      std::vector<int32_t> prompt = systems[uni(0, 2)];
      const std::vector<int32_t> q = tokens(uni(1, 2 * c.block_size), uni(0, 1u << 30));
      prompt.insert(prompt.end(), q.begin(), q.end());
      const std::string salt = uni(0, 3) == 0 ? "other" : "";
      const uint32_t max_tokens = uni(1, 4 * c.block_size);
      const uint32_t n = uni(0, 4) == 0 ? uni(2, 3) : 1;
      for (uint32_t k = 0; k < n; ++k) {
        GenerationRequest g;
        g.prompt = prompt;
        g.params.temperature = 0.0f;
        g.params.max_tokens = static_cast<int32_t>(max_tokens);
        g.params.ignore_eos = true;
        g.cache_salt = salt;
        g.share_prompt_with_previous = k > 0;
        const uint64_t id = engine.add_request(g);
        req.emplace(id, Tracked{prompt, max_tokens, false});
        live.push_back(id);
      }
    } else if (r < 23 && !live.empty()) {
      const size_t k = uni(0, static_cast<uint32_t>(live.size() - 1));
      req.at(live[k]).abort_requested = true;
      engine.abort_request(live[k]);
      live.erase(live.begin() + static_cast<std::ptrdiff_t>(k));
    } else if (engine.has_unfinished()) {
      for (const RequestOutput& o : engine.step()) {
        if (o.finished) std::erase(live, o.request_id);
      }
      const EngineStats s = engine.stats();
      ASSERT_EQ(s.kv.num_used_blocks + s.kv.num_free_blocks, c.num_blocks);
      const plinth_prefix_stats ps = prefix_stats();
      ASSERT_LE(ps.num_cached_blocks, s.kv.num_used_blocks);
      ASSERT_LE(ps.num_evictable_blocks, ps.num_cached_blocks);
      max_evictable = std::max<uint64_t>(max_evictable, ps.num_evictable_blocks);
    }
  }
  for (int guard = 0; engine.has_unfinished(); ++guard) {
    ASSERT_LT(guard, 100000) << "requests never finish";
    engine.step();
  }
  engine.step();

  size_t finished = 0;
  for (auto& [id, t] : req) {
    const Sequence* seq = engine.find(id);
    ASSERT_NE(seq, nullptr);
    const std::vector<int32_t> out(seq->output().begin(), seq->output().end());
    const std::vector<int32_t> want = expected_output(t.prompt, t.max_tokens);
    if (seq->finish_reason().value_or("") == "length") {
      EXPECT_EQ(out, want) << "request " << id << " (prompt " << t.prompt.size() << ", preempted "
                           << seq->timings().num_preemptions << "x) deviates from the model";
      ++finished;
    } else {
      EXPECT_TRUE(t.abort_requested) << id;
      ASSERT_LE(out.size(), want.size());
      EXPECT_TRUE(std::equal(out.begin(), out.end(), want.begin())) << "aborted " << id;
    }
    engine.release(id);
  }
  const EngineStats s = engine.stats();
  const plinth_prefix_stats ps = prefix_stats();
  EXPECT_GT(finished, 200u);
  EXPECT_GT(s.num_preemptions, 0u) << "the pool was meant to be small enough to preempt";
  EXPECT_GT(ps.num_evicted_blocks, 0u) << "the pool was meant to be small enough to evict";
  EXPECT_GT(ps.num_hit_tokens, 0u);
  EXPECT_GT(max_evictable, 0u);
  // Nothing runs: the only blocks in use are the cache's, and none is locked.
  EXPECT_EQ(s.kv.num_used_blocks, ps.num_cached_blocks);
  EXPECT_EQ(ps.num_evictable_blocks, ps.num_cached_blocks);
  PrefixCacheRef pc = pipeline_->prefix_cache();
  uint32_t evicted = 0;
  plinth_error err{};
  ASSERT_EQ(pc.vtable->evict(pc.instance, ps.num_cached_blocks, &evicted, &err), PLINTH_OK);
  EXPECT_EQ(evicted, ps.num_cached_blocks);
  EXPECT_EQ(engine.stats().kv.num_used_blocks, 0u) << "KV blocks leaked";
  std::printf("%s: %zu finished, %llu preemptions, %llu evicted blocks, hit %llu of %llu tokens\n",
              c.name, finished, static_cast<unsigned long long>(s.num_preemptions),
              static_cast<unsigned long long>(ps.num_evicted_blocks),
              static_cast<unsigned long long>(ps.num_hit_tokens),
              static_cast<unsigned long long>(ps.num_queried_tokens));
}

INSTANTIATE_TEST_SUITE_P(SmallPools, PrefixEngine,
                         ::testing::Values(PoolSetup{"fcfs", 4, 24, 4, 24, "fcfs"},
                                           PoolSetup{"lpm", 4, 24, 4, 24, "longest_prefix_first"},
                                           PoolSetup{"block8_priority", 8, 16, 6, 64, "priority"}),
                         [](const auto& p) { return std::string(p.param.name); });

}  // namespace
}  // namespace plinth
