// ABI 1.0 compatibility on the real model (SmolLM2-135M, greedy): a pipeline made only of plugins
// built against the released 1.0 headers (backend_cpu, kv_paged, the example scheduler_fcfs) gives
// the same token ids as the in-tree pipeline of manifests/cpu_float.json (both on backend_cpu's
// float path with f32 KV, whatever int8 kernel this CPU has); and the 1.0 prefix cache
// prefix_exact wired with the current scheduler_continuous loads, runs, and is asked to match.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "app/engine_host.hpp"
#include "model/synthetic_arch.hpp"
#include "runtime/call.hpp"
#include "runtime/host_context.hpp"
#include "runtime/logging.hpp"

namespace plinth {
namespace {

namespace fs = std::filesystem;

const fs::path kModel = fs::path(PLINTH_SOURCE_DIR) / "models/SmolLM2-135M-Instruct.Q4_1.gguf";
const fs::path kAbi10Dir = PLINTH_ABI10_PLUGIN_DIR;

std::string abi10(const std::string& name) {
  return (kAbi10Dir / ("libplinth_" + name + ".so")).string();
}

fs::path write_manifest(const std::string& name, const std::string& plugins_json) {
  fs::path dir = fs::temp_directory_path() / "plinth_abi_compat";
  fs::create_directories(dir);
  fs::path file = dir / (name + ".json");
  std::ofstream(file) << R"({"model": ")" << kModel.string() << R"(", "plugins": )" << plugins_json
                      << "}";
  return file;
}

const char* const kText =
    "The river rose slowly through the night, and by morning the low fields beyond the mill were "
    "a sheet of grey water. The miller walked the bank with a lantern long after it was needed, "
    "counting the fence posts that still showed above the flood. His daughter kept the accounts; "
    "she had written down every harvest for eleven years, and she knew that a wet spring meant "
    "a thin autumn.";

std::vector<std::vector<int32_t>> prompts(const EngineHost& host) {
  std::vector<int32_t> text = host.encode(kText);
  return {host.encode_chat({{"user", "What is the capital of France?"}}),
          host.encode("The quick brown fox"), std::vector<int32_t>(text.begin(), text.begin() + 37),
          text};
}

GenerationRequest greedy(const std::vector<int32_t>& prompt, int32_t max_tokens = 16) {
  GenerationRequest r;
  r.prompt = prompt;
  r.params.temperature = 0.0f;
  r.params.max_tokens = max_tokens;
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

// Each prompt alone, one after the other.
std::vector<std::vector<int32_t>> run_alone(Engine& engine,
                                            const std::vector<std::vector<int32_t>>& ps) {
  std::vector<std::vector<int32_t>> out;
  for (const auto& p : ps) {
    uint64_t id = engine.add_request(greedy(p));
    while (engine.has_unfinished()) engine.step();
    out.push_back(take_output(engine, id));
  }
  return out;
}

// All prompts in one batch.
std::vector<std::vector<int32_t>> run_batched(Engine& engine,
                                              const std::vector<std::vector<int32_t>>& ps) {
  std::vector<uint64_t> ids;
  for (const auto& p : ps) ids.push_back(engine.add_request(greedy(p)));
  while (engine.has_unfinished()) engine.step();
  std::vector<std::vector<int32_t>> out;
  for (uint64_t id : ids) out.push_back(take_output(engine, id));
  return out;
}

class Abi10Model : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!fs::exists(kModel))
      GTEST_SKIP() << "model missing: run tools/fetch_model (" << kModel << ")";
  }
  HostContext context_{make_stderr_logger(spdlog::level::warn)};
};

TEST_F(Abi10Model, PipelineOfAbi10PluginsGivesTheInTreeGreedyIds) {
  std::vector<std::vector<int32_t>> ps, expected;
  {
    EngineHost::Options o;
    o.manifest = fs::path(PLINTH_SOURCE_DIR) / "manifests/cpu_float.json";
    auto host = EngineHost::load(o, context_);
    for (const PipelinePlugin& p : host->pipeline().plugins()) {
      EXPECT_EQ(p.library->descriptor().abi_minor, PLINTH_ABI_MINOR) << p.library->describe();
    }
    ps = prompts(*host);
    expected = run_alone(host->engine(), ps);
  }
  EngineHost::Options o;
  o.manifest =
      write_manifest("abi_1_0_only", R"([
    {"kind": "backend", "library": ")" + abi10("backend_cpu") +
                                         R"(", "config": {"threads": 2, "matmul": "float"}},
    {"kind": "kv_cache", "library": ")" + abi10("kv_paged") +
                                         R"(", "config": {"block_size": 16}},
    {"kind": "scheduler", "library": ")" +
                                         abi10("scheduler_fcfs") +
                                         R"(", "config": {"max_num_seqs": 8}}])");
  auto host = EngineHost::load(o, context_);
  ASSERT_EQ(host->pipeline().plugins().size(), 3u);
  for (const PipelinePlugin& p : host->pipeline().plugins()) {
    EXPECT_EQ(p.library->descriptor().abi_major, 1);
    EXPECT_EQ(p.library->descriptor().abi_minor, 0) << p.library->describe();
    EXPECT_EQ(p.library->file().parent_path(), kAbi10Dir);
  }
  EXPECT_EQ(run_alone(host->engine(), ps), expected) << "ABI 1.0 plugins, one prompt at a time";
  EXPECT_EQ(run_batched(host->engine(), ps), expected) << "ABI 1.0 plugins, one batch";
  EXPECT_EQ(host->engine().stats().kv.num_used_blocks, 0u);
}

// A model that needs architecture features (ABI 1.4) is refused for a backend built before 1.4,
// naming its ABI and the features: it would read config alone and run the plain LLaMA block.
TEST(Abi10Arch, ABackendBefore14IsRefusedForAModelNeedingFeatures) {
  HostContext context{make_stderr_logger(spdlog::level::warn)};
  const fs::path model = fs::temp_directory_path() / "plinth_abi_compat_qwen3.gguf";
  ArchModelOptions ao;
  ao.arch = "qwen3";
  make_arch_model(ao).write_file(model.string());
  EngineHost::Options o;
  o.model = model;
  o.manifest = write_manifest("abi_1_0_qwen3", R"([
    {"kind": "backend", "library": ")" + abi10("backend_cpu") +
                                                   R"(", "config": {"threads": 2}},
    {"kind": "kv_cache", "library": ")" + abi10("kv_paged") +
                                                   R"(", "config": {"block_size": 16}},
    {"kind": "scheduler", "library": ")" + abi10("scheduler_fcfs") +
                                                   R"(", "config": {"max_num_seqs": 8}}])");
  try {
    (void)EngineHost::load(o, context);
    ADD_FAILURE() << "a 1.0 backend was given a qwen3 model";
  } catch (const std::exception& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("built against ABI 1.0"), std::string::npos) << what;
    EXPECT_NE(what.find("qk_norm"), std::string::npos) << what;
  }
  fs::remove(model);
}

TEST_F(Abi10Model, Abi10PrefixCacheRunsWithTheCurrentSchedulerContinuous) {
  EngineHost::Options o;
  o.manifest = write_manifest("abi_1_0_prefix_cache", R"([
    {"kind": "backend", "library": "backend_cpu", "config": {"threads": 2}},
    {"kind": "kv_cache", "library": "kv_paged", "config": {"block_size": 16}},
    {"kind": "prefix_cache", "library": ")" + abi10("prefix_exact") +
                                                          R"("},
    {"kind": "scheduler", "library": "scheduler_continuous", "config": {"max_num_seqs": 8}}])");
  auto host = EngineHost::load(o, context_);
  Pipeline& pipeline = host->pipeline();
  ASSERT_TRUE(pipeline.prefix_cache());
  EXPECT_EQ(pipeline.plugin(PLINTH_KIND_PREFIX_CACHE)->library->descriptor().abi_minor, 0);
  EXPECT_EQ(pipeline.plugin(PLINTH_KIND_SCHEDULER)->library->descriptor().abi_minor,
            PLINTH_ABI_MINOR);

  // The same unsalted prompt (3 full blocks and a part) twice, one after the other.
  const std::vector<int32_t> prompt = prompts(*host).back();
  ASSERT_GT(prompt.size(), 48u);
  const std::vector<std::vector<int32_t>> twice = {prompt};
  const std::vector<int32_t> first = run_alone(host->engine(), twice).at(0);
  const std::vector<int32_t> second = run_alone(host->engine(), twice).at(0);
  EXPECT_EQ(second, first) << "the second run may reuse the first one's cached blocks";

  PrefixCacheRef pc = pipeline.prefix_cache();
  plinth_prefix_stats stats{};
  call("prefix_exact.get_stats",
       [&](plinth_error* e) { return pc.vtable->get_stats(pc.instance, &stats, e); });
  EXPECT_EQ(stats.struct_size, PLINTH_ABI_1_0_SIZEOF_PREFIX_STATS);
  MetricsRegistry& metrics = context_.metrics();
  const double match_calls = metrics.value(
      metrics.register_metric("plinth_prefix_exact_match_calls_total", "", PLINTH_METRIC_COUNTER));

  // Unsalted sequences reach a 1.0 cache through its 1.0 match / insert.
  EXPECT_GE(match_calls, 1.0) << "scheduler_continuous never asked the 1.0 prefix cache to match";
  EXPECT_GT(stats.num_hit_tokens, 0u) << "the second run found nothing of the first one cached";
}

}  // namespace
}  // namespace plinth
