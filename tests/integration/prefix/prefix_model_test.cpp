// Prefix caching on the real model (SmolLM2-135M, backend_cpu with manifests/cpu.json's
// numerics): the token ids at temperature 0 are the same with prefix_radix loaded and without it
//  - for 300 chat requests that share three long system prompts, all queued at once, on a KV pool
//    so small that the cache evicts and the scheduler preempts (both asserted), under the fcfs
//    and the longest_prefix_first policies;
//  - for multi-turn conversations whose every turn resends the history;
// and seeded sampling gives the same text with and without a cache hit.
#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "app/engine_host.hpp"
#include "runtime/host_context.hpp"
#include "runtime/logging.hpp"

namespace plinth {
namespace {

namespace fs = std::filesystem;

const fs::path kModel = fs::path(PLINTH_SOURCE_DIR) / "models/SmolLM2-135M-Instruct.Q4_1.gguf";

const char* const kSystems[] = {
    "You are a careful assistant for a small library in a river town. You answer questions about "
    "opening hours, the catalogue, interlibrary loans and the reading room. Keep every answer "
    "short and friendly, never invent a book that the catalogue does not hold, and when you are "
    "not sure, say so and suggest asking the librarian at the front desk. The library opens at "
    "nine and closes at six on weekdays, at one on Saturdays, and stays closed on Sundays.",
    "You are a tutor for arithmetic and basic geometry. Explain each step in plain words, check "
    "the result at the end, and prefer small whole numbers in examples. If a question is not "
    "about mathematics, politely steer the student back to the exercise. Never give only the "
    "final number: always show how it was found, in at most three short sentences, and end "
    "with one encouraging remark about the student's progress.",
    "You are the help desk of a railway company. You know the timetable of the coastal line, "
    "which runs every half hour between the harbour and the university, and the mountain line, "
    "which runs every two hours. Tickets can be bought at the station or on board. Answer with "
    "the times and platforms when asked, apologise for delays, and never promise a connection "
    "that the timetable does not show.",
};

const char* const kTopics[] = {"the weather", "a late train", "a missing book", "fractions",
                               "a triangle",  "the harbour",  "Saturday",       "a ticket",
                               "the map",     "a refund"};

std::vector<int32_t> chat(const EngineHost& h, const std::string& system, const std::string& q) {
  return h.encode_chat({{"system", system}, {"user", q}});
}

fs::path write_manifest(const std::string& name, bool prefix, const char* policy) {
  fs::path dir = fs::temp_directory_path() / "plinth_prefix_model";
  fs::create_directories(dir);
  fs::path file = dir / (name + ".json");
  std::ofstream out(file);
  out << R"({"model": ")" << kModel.string() << R"(", "plugins": [
    {"kind": "backend", "library": "backend_cpu",
     "config": {"threads": 2, "matmul": "auto", "kv_dtype": "f16"}},
    {"kind": "kv_cache", "library": "kv_paged", "config": {"block_size": 16, "num_blocks": 32}},)";
  if (prefix) out << R"({"kind": "prefix_cache", "library": "prefix_radix"},)";
  out << R"({"kind": "scheduler", "library": "scheduler_continuous",
     "config": {"max_num_seqs": 8, "max_num_batched_tokens": 256, "lpm_max_waiting": 512, "policy": ")"
      << policy << R"("}}]})";
  return file;
}

struct RunResult {
  std::vector<std::vector<int32_t>> outputs;
  uint64_t preemptions = 0, evicted = 0, computed = 0;
};

GenerationRequest greedy(const std::vector<int32_t>& prompt, int32_t max_tokens) {
  GenerationRequest r;
  r.prompt = prompt;
  r.params.temperature = 0.0f;
  r.params.max_tokens = max_tokens;
  r.params.ignore_eos = true;
  return r;
}

uint64_t evicted_blocks(EngineHost& h) {
  PrefixCacheRef pc = h.pipeline().prefix_cache();
  if (!pc) return 0;
  plinth_prefix_stats s{};
  s.struct_size = sizeof(s);
  plinth_error err{};
  EXPECT_EQ(pc.vtable->get_stats(pc.instance, &s, &err), PLINTH_OK);
  return s.num_evicted_blocks;
}

RunResult run_all(EngineHost& h, const std::vector<std::vector<int32_t>>& prompts) {
  Engine& e = h.engine();
  const EngineStats before = e.stats();
  const uint64_t evicted0 = evicted_blocks(h);
  std::vector<uint64_t> ids;
  for (size_t i = 0; i < prompts.size(); ++i) {
    ids.push_back(e.add_request(greedy(prompts[i], 3 + static_cast<int32_t>(i % 4) * 6)));
  }
  while (e.has_unfinished()) e.step();
  RunResult r;
  for (uint64_t id : ids) {
    const Sequence* s = e.find(id);
    r.outputs.emplace_back(s->output().begin(), s->output().end());
    e.release(id);
  }
  r.preemptions = e.stats().num_preemptions - before.num_preemptions;
  r.computed = e.stats().num_computed_tokens - before.num_computed_tokens;
  r.evicted = evicted_blocks(h) - evicted0;
  return r;
}

class PrefixModel : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!fs::exists(kModel))
      GTEST_SKIP() << "model missing: run tools/fetch_model (" << kModel << ")";
  }
  std::unique_ptr<EngineHost> load(const std::string& name, bool prefix,
                                   const char* policy = "fcfs") {
    EngineHost::Options o;
    o.manifest = write_manifest(name, prefix, policy);
    return EngineHost::load(o, context_);
  }
  HostContext context_{make_stderr_logger(spdlog::level::warn)};
};

TEST_F(PrefixModel, ThreeHundredSharedSystemPromptsSameIdsOnAndOff) {
  auto off = load("off", false);
  std::vector<std::vector<int32_t>> prompts;
  for (int i = 0; i < 300; ++i) {
    const std::string q = "Question " + std::to_string(i) + ": tell me one thing about " +
                          kTopics[i % 10] + ", in " + std::to_string(2 + i % 5) + " words.";
    prompts.push_back(chat(*off, kSystems[i % 3], q));
  }
  ASSERT_GE(prompts[0].size(), 80u) << "the system prompts were meant to be long";
  const RunResult ref = run_all(*off, prompts);
  EXPECT_GT(ref.preemptions, 0u) << "the pool was meant to be small enough to preempt";
  off.reset();
  for (const char* policy : {"fcfs", "longest_prefix_first"}) {
    auto on = load(std::string("on_") + policy, true, policy);
    const RunResult got = run_all(*on, prompts);
    for (size_t i = 0; i < prompts.size(); ++i) {
      ASSERT_EQ(got.outputs[i], ref.outputs[i]) << policy << ": request " << i;
    }
    EXPECT_GT(got.evicted, 0u) << policy << ": the pool was meant to be small enough to evict";
    EXPECT_GT(got.preemptions, 0u)
        << policy << ": the pool was meant to be small enough to preempt";
    EXPECT_LT(got.computed * 2, ref.computed) << policy << ": the system prompts were not reused";
    std::printf(
        "%s: computed %llu tokens with the cache, %llu without; %llu evicted blocks, "
        "%llu / %llu preemptions\n",
        policy, static_cast<unsigned long long>(got.computed),
        static_cast<unsigned long long>(ref.computed), static_cast<unsigned long long>(got.evicted),
        static_cast<unsigned long long>(got.preemptions),
        static_cast<unsigned long long>(ref.preemptions));
  }
}

TEST_F(PrefixModel, MultiTurnConversationsSameIdsOnAndOff) {
  auto off = load("turns_off", false);
  auto on = load("turns_on", true);
  for (int c = 0; c < 3; ++c) {
    std::vector<ChatMessage> history{{"system", kSystems[c]}};
    for (int turn = 0; turn < 3; ++turn) {
      history.push_back({"user", std::string("Turn ") + std::to_string(turn) + ": and what about " +
                                     kTopics[(c * 3 + turn) % 10] + "?"});
      const std::vector<int32_t> prompt = off->encode_chat(history);
      const uint64_t before = on->engine().stats().num_computed_tokens;
      const RunResult a = run_all(*off, {prompt});
      const RunResult b = run_all(*on, {prompt});
      ASSERT_EQ(b.outputs[0], a.outputs[0]) << "conversation " << c << " turn " << turn;
      if (turn > 0) {
        // Everything up to the last full block of the previous turn's prompt + answer is reused.
        EXPECT_LT(on->engine().stats().num_computed_tokens - before, prompt.size() / 2)
            << "conversation " << c << " turn " << turn << " recomputed its history";
      }
      history.push_back({"assistant", off->tokenizer().decode(a.outputs[0])});
    }
  }
}

TEST_F(PrefixModel, SeededSamplingSameTextWithAndWithoutHit) {
  auto on = load("seeded_on", true);
  auto off = load("seeded_off", false);
  const std::vector<int32_t> prompt = chat(*on, kSystems[0], "Describe the reading room.");
  auto sample = [&](EngineHost& h) {
    GenerationRequest r;
    r.prompt = prompt;
    r.params.temperature = 0.8f;
    r.params.top_p = 0.95f;
    r.params.seed = 1234;
    r.params.max_tokens = 24;
    const uint64_t id = h.engine().add_request(r);
    while (h.engine().has_unfinished()) h.engine().step();
    std::string text = h.engine().find(id)->text();
    h.engine().release(id);
    return text;
  };
  const std::string cold = sample(*on);
  const uint64_t before = on->engine().stats().num_computed_tokens;
  const std::string hit = sample(*on);
  EXPECT_LT(on->engine().stats().num_computed_tokens - before, prompt.size())
      << "the second run was meant to hit the cache";
  EXPECT_EQ(hit, cold);
  EXPECT_EQ(sample(*off), cold);
  EXPECT_FALSE(cold.empty());
}

}  // namespace
}  // namespace plinth
