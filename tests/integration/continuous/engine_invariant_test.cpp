// The real Engine driving the real kv_paged and scheduler_continuous plugins (loaded as .so files
// from a manifest) over a deterministic fake backend with a token-per-slot KV cache
// (fake_kv_backend.cpp), through thousands of random add / step / abort operations on small pools.
// Checked: KV counts consistent after every step and all blocks back at the end; running sequences
// and batch sizes within max_num_seqs / max_num_batched_tokens (the backend refuses larger
// batches); every request finishes ("length") or is aborted; each finished request's output is
// exactly the fake model's continuation computed here from the plain token list (so batching,
// chunked prefill, preemption and recompute never change it) and each aborted one's is a prefix of
// it; what step() streamed equals the sequence's output; preemption did happen.
#include <gtest/gtest.h>

#include <filesystem>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "engine/engine.hpp"
#include "fake_model.hpp"
#include "runtime/call.hpp"
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

struct Config {
  const char* name;
  uint32_t block_size, num_blocks, max_num_seqs, max_num_batched_tokens;
  bool chunked;
  const char* policy;
  uint32_t max_len;  // prompt + max_tokens of a random request, at most
  /// The fake backend's "argmax" option: "require" = argmax ids only, logits NULL (ABI 1.3).
  const char* argmax = "none";
};

std::ostream& operator<<(std::ostream& o, const Config& c) {
  return o << c.name;
}

class EngineInvariants : public ::testing::TestWithParam<Config> {
 protected:
  void SetUp() override {
    const Config& c = GetParam();
    const fs::path lib = fs::path(PLINTH_BUILD_DIR) / "test_plugins/libplinth_fake_kv_backend.so";
    const std::string text =
        R"({"plugins": [
      {"kind": "backend", "library": ")" +
        lib.string() + R"(", "config": {"max_batch_tokens": )" +
        std::to_string(c.max_num_batched_tokens) + R"(, "max_batch_seqs": )" +
        std::to_string(c.max_num_seqs) + R"(, "argmax": ")" + c.argmax + R"("}},
      {"kind": "kv_cache", "library": "kv_paged", "config": {"block_size": )" +
        std::to_string(c.block_size) + R"(, "num_blocks": )" + std::to_string(c.num_blocks) +
        R"(}},
      {"kind": "scheduler", "library": "scheduler_continuous", "config": {"max_num_seqs": )" +
        std::to_string(c.max_num_seqs) + R"(, "max_num_batched_tokens": )" +
        std::to_string(c.max_num_batched_tokens) + R"(, "enable_chunked_prefill": )" +
        (c.chunked ? "true" : "false") + R"(, "policy": ")" + c.policy + R"("}}]})";
    manifest_ = parse_manifest(text, fs::temp_directory_path() / "engine_invariants.json");
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
    EngineOptions eo;
    eo.context_length = 4096;
    eo.vocab_size = kVocab;
    engine_ = std::make_unique<Engine>(p, tokenizer_, eo);
  }
  void TearDown() override {
    engine_.reset();
    pipeline_.reset();
  }

  HostContext host_{make_stderr_logger(spdlog::level::warn)};
  Tokenizer tokenizer_ = tiny_tokenizer();
  Manifest manifest_;
  plinth_model_desc desc_{};
  std::unique_ptr<Pipeline> pipeline_;
  std::unique_ptr<Engine> engine_;
};

struct Tracked {
  std::vector<int32_t> prompt;
  uint32_t max_tokens = 0;
  std::vector<int32_t> streamed;
  std::string finish_reason;
  bool abort_requested = false;
};

TEST_P(EngineInvariants, RandomAddStepAbortKeepsEveryInvariant) {
  const Config& c = GetParam();
  Engine& engine = *engine_;
  std::mt19937 rng(20240601u + c.block_size * 7u + c.max_num_seqs);
  auto uni = [&](uint32_t lo, uint32_t hi) {
    return std::uniform_int_distribution<uint32_t>(lo, hi)(rng);
  };
  std::map<uint64_t, Tracked> req;
  std::vector<uint64_t> live;
  uint64_t refused = 0, steps = 0, max_running = 0;

  auto check_step_invariants = [&] {
    EngineStats s = engine.stats();
    ASSERT_EQ(s.kv.num_blocks, c.num_blocks);
    ASSERT_EQ(s.kv.num_used_blocks + s.kv.num_free_blocks, c.num_blocks);
    ASSERT_LE(s.kv.num_used_slots, s.kv.num_allocated_slots);
    ASSERT_EQ(s.kv.num_allocated_slots, uint64_t{s.kv.num_used_blocks} * c.block_size);
    ASSERT_LE(s.num_running, c.max_num_seqs);
    max_running = std::max<uint64_t>(max_running, s.num_running);
  };
  auto do_step = [&] {
    for (const RequestOutput& o : engine.step()) {
      Tracked& t = req.at(o.request_id);
      ASSERT_TRUE(t.finish_reason.empty())
          << "news for request " << o.request_id << " after it finished";
      t.streamed.insert(t.streamed.end(), o.new_token_ids.begin(), o.new_token_ids.end());
      if (o.finished) t.finish_reason = o.finish_reason;
    }
    ++steps;
    check_step_invariants();
  };

  for (int op = 0; op < 4000; ++op) {
    const uint32_t r = uni(0, 99);
    if (r < 25 && live.size() < 3 * c.max_num_seqs) {
      Tracked t;
      const uint32_t len = uni(2, c.max_len);
      t.max_tokens = uni(1, std::min<uint32_t>(len - 1, 24));
      t.prompt.resize(len - t.max_tokens);
      for (int32_t& x : t.prompt) x = static_cast<int32_t>(uni(0, kVocab - 1));
      GenerationRequest g;
      g.prompt = t.prompt;
      g.params.temperature = 0.0f;
      g.params.max_tokens = static_cast<int32_t>(t.max_tokens);
      g.params.ignore_eos = true;
      g.priority = static_cast<int32_t>(uni(0, 3));
      const uint64_t id = engine.add_request(g);
      req.emplace(id, std::move(t));
      live.push_back(id);
    } else if (r < 27) {
      // A request that can never fit the pool: refused at add, nothing queued or held.
      GenerationRequest g;
      g.prompt.assign(c.num_blocks * c.block_size + 1, 5);
      g.params.max_tokens = 4;
      EXPECT_THROW(engine.add_request(g), std::invalid_argument);
      ++refused;
    } else if (r < 32 && !live.empty()) {
      const size_t k = uni(0, static_cast<uint32_t>(live.size() - 1));
      Tracked& t = req.at(live[k]);
      if (t.finish_reason.empty()) t.abort_requested = true;
      engine.abort_request(live[k]);  // also on finished ones: must be ignored
      live.erase(live.begin() + static_cast<std::ptrdiff_t>(k));
    } else if (engine.has_unfinished()) {
      do_step();
      if (HasFatalFailure()) return;
    }
    std::erase_if(live, [&](uint64_t id) { return !req.at(id).finish_reason.empty(); });
  }
  for (int guard = 0; engine.has_unfinished(); ++guard) {
    ASSERT_LT(guard, 100000) << "requests never finish (starvation or livelock)";
    do_step();
    if (HasFatalFailure()) return;
  }
  do_step();  // reports aborts requested after the last step

  const EngineStats s = engine.stats();
  EXPECT_EQ(s.kv.num_used_blocks, 0u) << "KV blocks leaked";
  EXPECT_EQ(s.kv.num_free_blocks, c.num_blocks);
  EXPECT_GT(s.num_preemptions, 0u) << "the pool was meant to be small enough to preempt";
  EXPECT_GT(refused, 0u);
  EXPECT_GE(max_running, 3u) << "sequences were meant to run together";
  size_t finished = 0, aborted = 0;
  for (auto& [id, t] : req) {
    const Sequence* seq = engine.find(id);
    ASSERT_NE(seq, nullptr);
    ASSERT_TRUE(seq->finished()) << "request " << id << " neither finished nor aborted";
    EXPECT_EQ(seq->finish_reason().value(), t.finish_reason) << id;
    const std::vector<int32_t> out(seq->output().begin(), seq->output().end());
    EXPECT_EQ(out, t.streamed) << "request " << id << ": streamed tokens differ from the output";
    const std::vector<int32_t> want = expected_output(t.prompt, t.max_tokens);
    if (t.finish_reason == "length") {
      EXPECT_FALSE(t.abort_requested && out.size() < t.max_tokens);
      EXPECT_EQ(out, want) << "request " << id << " (prompt " << t.prompt.size() << ", max "
                           << t.max_tokens << ", preempted " << seq->timings().num_preemptions
                           << "x) deviates from the fake model";
      ++finished;
    } else {
      EXPECT_EQ(t.finish_reason, "abort") << id;
      EXPECT_TRUE(t.abort_requested) << id;
      ASSERT_LE(out.size(), want.size());
      EXPECT_TRUE(std::equal(out.begin(), out.end(), want.begin())) << "aborted " << id;
      ++aborted;
    }
    engine.release(id);
  }
  EXPECT_GT(finished, 100u);
  EXPECT_GT(aborted, 10u);
  RecordProperty("steps", static_cast<int>(steps));
  std::printf(
      "%s: %zu requests finished, %zu aborted, %llu refused, %llu steps, %llu preemptions\n",
      c.name, finished, aborted, static_cast<unsigned long long>(refused),
      static_cast<unsigned long long>(steps), static_cast<unsigned long long>(s.num_preemptions));
}

INSTANTIATE_TEST_SUITE_P(
    SmallPools, EngineInvariants,
    ::testing::Values(Config{"fcfs_chunked", 4, 24, 4, 16, true, "fcfs", 80},
                      Config{"priority_chunked", 4, 24, 4, 16, true, "priority", 80},
                      Config{"fcfs_whole_prefill", 8, 12, 6, 96, false, "fcfs", 90},
                      Config{"priority_block1", 1, 90, 5, 24, true, "priority", 60},
                      Config{"fcfs_argmax_ids_only", 4, 24, 4, 16, true, "fcfs", 80, "require"}),
    [](const auto& p) { return std::string(p.param.name); });

}  // namespace
}  // namespace plinth
