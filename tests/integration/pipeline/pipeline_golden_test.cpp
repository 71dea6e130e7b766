// Greedy generation through the whole pipeline equals the independent NumPy reference
// (tests/fixtures/golden/smollm2_greedy.json, tools/reference/make_golden.py), and does not depend
// on batching: every prompt alone, all prompts in one continuous batch, and with a KV pool so small
// that sequences are preempted and recomputed.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "app/engine_host.hpp"
#include "runtime/host_context.hpp"

namespace plinth {
namespace {

namespace fs = std::filesystem;

const fs::path kModel = fs::path(PLINTH_SOURCE_DIR) / "models/SmolLM2-135M-Instruct.Q4_1.gguf";

struct GoldenPrompt {
  std::string name;
  std::vector<int32_t> prompt, greedy;
};

std::vector<GoldenPrompt> load_golden() {
  std::ifstream in(fs::path(PLINTH_SOURCE_DIR) / "tests/fixtures/golden/smollm2_greedy.json");
  nlohmann::json j = nlohmann::json::parse(in);
  std::vector<GoldenPrompt> out;
  for (const auto& p : j.at("prompts")) {
    out.push_back({p.at("name"), p.at("prompt_ids").get<std::vector<int32_t>>(),
                   p.at("greedy_ids").get<std::vector<int32_t>>()});
  }
  return out;
}

// A manifest in a temp folder: the plugins resolve through the build tree's plugin folder.
// backend_cpu runs the float reference path (manifests/cpu_float.json's config), whose greedy ids
// equal the NumPy reference's.
fs::path write_manifest(const std::string& name, const std::string& kv_config) {
  fs::path dir = fs::temp_directory_path() / "plinth_pipeline_golden";
  fs::create_directories(dir);
  fs::path file = dir / (name + ".json");
  std::ofstream(file) << R"({"model": ")" << kModel.string() << R"(", "plugins": [
    {"kind": "backend", "library": "backend_cpu", "config": {"threads": 2, "matmul": "float", "kv_dtype": "f32"}},
    {"kind": "kv_cache", "library": "kv_paged", "config": )"
                      << kv_config << R"(},
    {"kind": "scheduler", "library": "scheduler_continuous", "config": {"max_num_batched_tokens": 256}}]})";
  return file;
}

GenerationRequest greedy_request(const GoldenPrompt& p) {
  GenerationRequest r;
  r.prompt = p.prompt;
  r.params.temperature = 0.0f;
  r.params.max_tokens = static_cast<int32_t>(p.greedy.size());
  r.params.ignore_eos = true;  // the reference generates past <|im_end|>
  return r;
}

// Runs `prompts` as one continuous batch; returns each one's generated ids.
std::vector<std::vector<int32_t>> run_batch(EngineHost& host,
                                            const std::vector<GoldenPrompt>& prompts,
                                            uint64_t* preemptions = nullptr) {
  Engine& engine = host.engine();
  std::vector<uint64_t> ids;
  for (const GoldenPrompt& p : prompts) ids.push_back(engine.add_request(greedy_request(p)));
  while (engine.has_unfinished()) engine.step();
  std::vector<std::vector<int32_t>> out;
  for (uint64_t id : ids) {
    const Sequence* s = engine.find(id);
    out.emplace_back(s->output().begin(), s->output().end());
    EXPECT_EQ(s->finish_reason().value_or(""), "length");
    engine.release(id);
  }
  if (preemptions != nullptr) *preemptions = engine.stats().num_preemptions;
  EXPECT_EQ(engine.stats().kv.num_used_blocks, 0u) << "KV blocks leaked";
  return out;
}

class PipelineGolden : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!fs::exists(kModel))
      GTEST_SKIP() << "model missing: run tools/fetch_model (" << kModel << ")";
    golden_ = load_golden();
    ASSERT_GE(golden_.size(), 8u);
  }
  std::unique_ptr<EngineHost> load(const std::string& kv_config) {
    EngineHost::Options o;
    o.manifest = write_manifest("m" + std::to_string(counter_++), kv_config);
    return EngineHost::load(o, context_);
  }
  HostContext context_;
  std::vector<GoldenPrompt> golden_;
  int counter_ = 0;
};

TEST_F(PipelineGolden, EachPromptAloneMatchesTheReference) {
  auto host = load(R"({"block_size": 16})");
  for (const GoldenPrompt& p : golden_) {
    auto out = run_batch(*host, {p});
    EXPECT_EQ(out[0], p.greedy) << p.name;
  }
}

TEST_F(PipelineGolden, AllPromptsInOneBatchMatchTheReference) {
  auto host = load(R"({"block_size": 16})");
  auto out = run_batch(*host, golden_);
  for (size_t i = 0; i < golden_.size(); ++i)
    EXPECT_EQ(out[i], golden_[i].greedy) << golden_[i].name;
}

TEST_F(PipelineGolden, PreemptionDoesNotChangeTheOutput) {
  // 24 blocks of 8 tokens = 192 slots: the longest prompt (~120 tokens) + 32 fits alone, but the
  // batch does not, so the scheduler must preempt and recompute.
  auto host = load(R"({"block_size": 8, "num_blocks": 24})");
  uint64_t preemptions = 0;
  auto out = run_batch(*host, golden_, &preemptions);
  EXPECT_GT(preemptions, 0u) << "the pool was meant to be small enough to force preemption";
  for (size_t i = 0; i < golden_.size(); ++i)
    EXPECT_EQ(out[i], golden_[i].greedy) << golden_[i].name;
}

}  // namespace
}  // namespace plinth
