// Continuous batching on the real model (SmolLM2-135M, backend_cpu) at temperature 0: 64 prompts
// of mixed lengths (5..300 tokens; slices of a fixed English text, some through the chat
// template) give the same token ids run one by one, all in one continuous batch, and with a KV
// pool so small that the scheduler preempts and recomputes (asserted) — with the float reference
// path (manifests/cpu_float.json: float matmul, f32 KV) and with the default pipeline of
// manifests/cpu.json (matmul auto: int8 where the CPU has AVX2 or VNNI; f16 KV).
#include <gtest/gtest.h>

#include <chrono>
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

// Fixed English text (public-domain style prose written for this test) sliced into prompts.
const char* const kText =
    "The river rose slowly through the night, and by morning the low fields beyond the mill were "
    "a sheet of grey water. The miller walked the bank with a lantern long after it was needed, "
    "counting the fence posts that still showed above the flood. His daughter kept the accounts; "
    "she had written down every harvest for eleven years, and she knew that a wet spring meant "
    "a thin autumn. In the village the talk was of the bridge, which had stood for two hundred "
    "years and now shook whenever a cart crossed it. The council met in the school room and "
    "argued about stone and timber, about the cost of hiring engineers from the city, and about "
    "whether the old ford upstream could be made safe again. A young surveyor arrived at the end "
    "of the week with a case of instruments and a notebook full of careful drawings. He measured "
    "the current at six places, sounded the depth with a weighted line, and spent an evening at "
    "the inn explaining to anyone who would listen how water finds the weakest point in any wall. "
    "By the first dry day the farmers had begun to clear the ditches, the children were sent to "
    "gather the branches the river had left in the lanes, and the miller's daughter opened a new "
    "page in her book and wrote the date at the top in a firm hand. Nobody could say when the "
    "fields would be ready to plough, but everyone agreed that the work would not wait for them. "
    "Later that summer the bridge was rebuilt with a wider arch, and the surveyor's drawings were "
    "framed and hung in the school room, where the children studied them during long afternoons.";

const char* const kQuestions[] = {"What is the capital of France?",
                                  "Explain photosynthesis in two sentences.",
                                  "Write a haiku about autumn rain.",
                                  "List three prime numbers greater than ten.",
                                  "Why is the sky blue?",
                                  "Give me a tip for learning to cook.",
                                  "What does a compiler do?",
                                  "Describe a cat to someone who has never seen one."};

struct Prompt {
  std::vector<int32_t> ids;
  int32_t max_tokens;
};

// 64 prompts: every 8th a chat prompt, the rest text slices whose length is skewed towards short
// ones (5..300 tokens); max_tokens 8..24.
std::vector<Prompt> make_prompts(const EngineHost& host) {
  std::string text = kText;
  std::vector<int32_t> all = host.encode(text + " " + text);
  std::vector<Prompt> out;
  for (uint32_t i = 0; i < 64; ++i) {
    Prompt p;
    p.max_tokens = static_cast<int32_t>(8 + (i * 7) % 17);
    if (i % 8 == 3) {
      p.ids = host.encode_chat({{"user", kQuestions[i / 8]}});
    } else {
      const uint32_t u = (i * 37) % 64;  // a permutation of 0..63
      const uint32_t len = 5 + u * u * 295 / (63 * 63);
      const uint32_t offset = (i * 53) % static_cast<uint32_t>(all.size() - len);
      p.ids.assign(all.begin() + offset, all.begin() + offset + len);
    }
    out.push_back(std::move(p));
  }
  return out;
}

GenerationRequest greedy(const Prompt& p) {
  GenerationRequest r;
  r.prompt = p.ids;
  r.params.temperature = 0.0f;
  r.params.max_tokens = p.max_tokens;
  r.params.ignore_eos = true;
  return r;
}

std::vector<int32_t> take_output(Engine& engine, uint64_t id) {
  const Sequence* s = engine.find(id);
  EXPECT_EQ(s->finish_reason().value_or(""), "length");
  std::vector<int32_t> out(s->output().begin(), s->output().end());
  engine.release(id);
  return out;
}

fs::path write_manifest(const std::string& name, const std::string& backend_config,
                        const std::string& kv_config) {
  fs::path dir = fs::temp_directory_path() / "plinth_continuous_batching";
  fs::create_directories(dir);
  fs::path file = dir / (name + ".json");
  std::ofstream(file) << R"({"model": ")" << kModel.string() << R"(", "plugins": [
    {"kind": "backend", "library": "backend_cpu", "config": )"
                      << backend_config << R"(},
    {"kind": "kv_cache", "library": "kv_paged", "config": )"
                      << kv_config << R"(},
    {"kind": "scheduler", "library": "scheduler_continuous",
     "config": {"max_num_seqs": 64, "max_num_batched_tokens": 512}}]})";
  return file;
}

double seconds_since(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
}

struct Backend {
  const char* name;
  const char* config;
};

class ContinuousBatching : public ::testing::TestWithParam<Backend> {};

TEST_P(ContinuousBatching, SameIdsAloneBatchedAndPreempted) {
  if (!fs::exists(kModel))
    GTEST_SKIP() << "model missing: run tools/fetch_model (" << kModel << ")";
  const std::string name = GetParam().name, backend = GetParam().config;
  HostContext context(make_stderr_logger(spdlog::level::warn));
  EngineHost::Options o;
  o.manifest = write_manifest(name + "_roomy", backend, R"({"block_size": 16})");
  auto host = EngineHost::load(o, context);
  const std::vector<Prompt> prompts = make_prompts(*host);
  size_t longest = 0, shortest = 1 << 30;
  for (const Prompt& p : prompts) {
    longest = std::max(longest, p.ids.size());
    shortest = std::min(shortest, p.ids.size());
  }
  EXPECT_LE(shortest, 10u);
  EXPECT_GE(longest, 280u);
  ASSERT_LE(longest, 300u);
  Engine& engine = host->engine();

  // 1. One by one.
  auto t0 = std::chrono::steady_clock::now();
  std::vector<std::vector<int32_t>> alone;
  for (const Prompt& p : prompts) {
    uint64_t id = engine.add_request(greedy(p));
    while (engine.has_unfinished()) engine.step();
    alone.push_back(take_output(engine, id));
  }
  const double t_alone = seconds_since(t0);

  // 2. All 64 in one continuous batch.
  t0 = std::chrono::steady_clock::now();
  std::vector<uint64_t> ids;
  for (const Prompt& p : prompts) ids.push_back(engine.add_request(greedy(p)));
  uint32_t max_running = 0;
  while (engine.has_unfinished()) {
    engine.step();
    max_running = std::max(max_running, engine.stats().num_running);
  }
  const double t_batch = seconds_since(t0);
  EXPECT_GE(max_running, 32u) << "the batch was meant to run many sequences at once";
  EXPECT_EQ(engine.stats().num_preemptions, 0u);
  for (size_t i = 0; i < prompts.size(); ++i) {
    EXPECT_EQ(take_output(engine, ids[i]), alone[i]) << "prompt " << i << " batched";
  }
  EXPECT_EQ(engine.stats().kv.num_used_blocks, 0u);

  // 3. A pool of 24 blocks of 16 tokens (384 slots): the longest prompt + its output fits alone,
  //    the batch does not, so sequences are preempted and recomputed.
  host.reset();
  o.manifest = write_manifest(name + "_tiny", backend, R"({"block_size": 16, "num_blocks": 24})");
  auto tiny = EngineHost::load(o, context);
  Engine& small = tiny->engine();
  t0 = std::chrono::steady_clock::now();
  ids.clear();
  for (const Prompt& p : prompts) ids.push_back(small.add_request(greedy(p)));
  while (small.has_unfinished()) small.step();
  const double t_tiny = seconds_since(t0);
  const uint64_t preemptions = small.stats().num_preemptions;
  EXPECT_GT(preemptions, 0u) << "the pool was meant to be small enough to force preemption";
  for (size_t i = 0; i < prompts.size(); ++i) {
    EXPECT_EQ(take_output(small, ids[i]), alone[i]) << "prompt " << i << " under preemption";
  }
  EXPECT_EQ(small.stats().kv.num_used_blocks, 0u);
  std::printf(
      "%s: 64 prompts (%zu..%zu tokens): alone %.1f s, batched %.1f s (up to %u running), "
      "tiny pool %.1f s (%llu preemptions)\n",
      name.c_str(), shortest, longest, t_alone, t_batch, max_running, t_tiny,
      static_cast<unsigned long long>(preemptions));
}

INSTANTIATE_TEST_SUITE_P(
    Backends, ContinuousBatching,
    ::testing::Values(Backend{"float", R"({"threads": 2, "matmul": "float", "kv_dtype": "f32"})"},
                      Backend{"default_auto_f16kv",
                              R"({"threads": 2, "matmul": "auto", "kv_dtype": "f16"})"}),
    [](const auto& p) { return std::string(p.param.name); });

}  // namespace
}  // namespace plinth
