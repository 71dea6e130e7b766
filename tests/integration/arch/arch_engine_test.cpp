// Temperature-0 output never depends on batching, caching or speculation — on every
// architecture: for each synthetic model (host/model/synthetic_arch.hpp) the greedy ids of six
// prompts run alone are the reference, and these runs must give exactly them:
//   batched (one continuous batch), preempted (a KV pool too small for the batch), prefix cache
//   on (prefix_radix; shared prefixes, each prompt run twice), speculation: n-gram, a draft model
//   (the model's first 2 layers, layer_selection as `plinth draft-model`), layer skip (exit
//   layer 2 through plinth.early_exit/1).
// backend_cpu's float path with f32 KV is batch-invariant, so the ids must be identical.
// Built a second time as test_gemma3_engine (PLINTH_REAL_GEMMA3): the same tests on the real
// Gemma 3 270M Q4_K_M file (tools/fetch_model --model gemma3-270m), on manifests/cpu.json's
// backend path (int8 activations, f16 KV; also batch-invariant), 12 tokens per prompt.
#include <gtest/gtest.h>

#include <unistd.h>
#include <filesystem>
#include <fstream>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "app/engine_host.hpp"
#include "model/gguf.hpp"
#include "model/layer_selection.hpp"
#include "model/synthetic_arch.hpp"
#include "runtime/host_context.hpp"

namespace plinth {
namespace {

namespace fs = std::filesystem;

const char* const kFloatConfig = R"({"threads": 2, "matmul": "float", "kv_dtype": "f32"})";
const char* const kInt8Config = R"({"threads": 2, "matmul": "int8", "kv_dtype": "f16"})";
const std::string kGemma3 = "gemma3-270m";  // the real file, not a synthetic model
const std::string kGemma3File = std::string(PLINTH_SOURCE_DIR) + "/models/gemma-3-270m-q4_k_m.gguf";

std::vector<std::vector<int32_t>> make_prompts() {
  std::mt19937 rng(5);
  std::uniform_int_distribution<int32_t> id(3, 511);
  std::vector<int32_t> shared(14);
  for (int32_t& t : shared) t = id(rng);
  std::vector<std::vector<int32_t>> out;
  for (const int n : {5, 9, 17, 26, 12, 33}) {
    std::vector<int32_t> p;
    if (out.size() < 3) p = shared;  // three prompts share a 14-token prefix
    for (int i = 0; i < n; ++i) p.push_back(id(rng));
    // A repeated stretch, so the n-gram speculator finds matches to propose.
    p.insert(p.end(), p.begin(), p.begin() + std::min<size_t>(p.size(), 6));
    out.push_back(p);
  }
  return out;
}

class ArchEngine : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("plinth_arch_engine_" + GetParam() + "_" + std::to_string(::getpid()));
    fs::create_directories(dir_);
    prompts_ = make_prompts();
    draft_ = dir_ / "draft.gguf";
    if (GetParam() == kGemma3) {
      if (!fs::exists(kGemma3File)) {
        GTEST_SKIP() << "model absent: " << kGemma3File
                     << " (fetch it with tools/fetch_model --model gemma3-270m)";
      }
      model_ = kGemma3File;
      config_ = kInt8Config;
      generate_ = 12;
      return;
    }
    model_ = dir_ / "model.gguf";
    ArchModelOptions o;
    o.arch = GetParam();
    o.seed = 3;
    make_arch_model(o).write_file(model_.string());
  }
  void TearDown() override { fs::remove_all(dir_); }

  // The draft model (the model's first 2 layers, as `plinth draft-model`), written on first use.
  const fs::path& draft_model() {
    if (!fs::exists(draft_)) {
      const auto f = GgufFile::open(model_.string());
      select_first_layers(*f, 2).write_file(draft_.string());
    }
    return draft_;
  }

  std::string backend() const {
    return R"({"kind": "backend", "library": "backend_cpu", "config": )" + config_ + "}";
  }

  std::unique_ptr<EngineHost> load(const std::string& name, const std::string& plugins) {
    const fs::path file = dir_ / (name + ".json");
    std::ofstream(file) << R"({"model": ")" << model_.string() << R"(", "plugins": [)" << plugins
                        << "]}";
    EngineHost::Options o;
    o.manifest = file;
    return EngineHost::load(o, context_);
  }

  std::string pipeline(const std::string& kv, const std::string& extra = "") const {
    return backend() + R"(, {"kind": "kv_cache", "library": "kv_paged", "config": )" + kv +
           R"(}, {"kind": "scheduler", "library": "scheduler_continuous", "config": {"max_num_batched_tokens": 128}})" +
           extra;
  }

  // Runs `which` prompts as one continuous batch; their generated ids.
  // Without a prefix cache (which keeps finished sequences' blocks) every block must be free
  // again afterwards.
  std::vector<std::vector<int32_t>> run(EngineHost& host, const std::vector<size_t>& which,
                                        uint64_t* preemptions = nullptr, bool cached = false) {
    Engine& engine = host.engine();
    std::vector<uint64_t> ids;
    for (const size_t i : which) {
      GenerationRequest r;
      r.prompt = prompts_[i];
      r.params.temperature = 0.0f;
      r.params.max_tokens = generate_;
      r.params.ignore_eos = true;
      ids.push_back(engine.add_request(r));
    }
    while (engine.has_unfinished()) engine.step();
    std::vector<std::vector<int32_t>> out;
    for (const uint64_t id : ids) {
      const Sequence* s = engine.find(id);
      out.emplace_back(s->output().begin(), s->output().end());
      engine.release(id);
    }
    if (preemptions != nullptr) *preemptions = engine.stats().num_preemptions;
    if (!cached) {
      EXPECT_EQ(engine.stats().kv.num_used_blocks, 0u) << "KV blocks leaked";
    }
    return out;
  }

  std::vector<size_t> all() const {
    std::vector<size_t> v(prompts_.size());
    for (size_t i = 0; i < v.size(); ++i) v[i] = i;
    return v;
  }

  // The reference: each prompt alone.
  std::vector<std::vector<int32_t>> alone() {
    auto host = load("alone", pipeline(R"({"block_size": 4})"));
    std::vector<std::vector<int32_t>> out;
    for (size_t i = 0; i < prompts_.size(); ++i) out.push_back(run(*host, {i})[0]);
    return out;
  }

  void expect_same(const std::vector<std::vector<int32_t>>& got,
                   const std::vector<std::vector<int32_t>>& want, const std::string& what) {
    ASSERT_EQ(got.size(), want.size());
    for (size_t i = 0; i < got.size(); ++i) {
      EXPECT_EQ(got[i], want[i]) << GetParam() << ", " << what << ", prompt " << i;
    }
  }

  HostContext context_;
  fs::path dir_, model_, draft_;
  std::string config_ = kFloatConfig;
  int32_t generate_ = 20;
  std::vector<std::vector<int32_t>> prompts_;
};

TEST_P(ArchEngine, BatchedAndPreemptedEqualAlone) {
  const auto want = alone();
  for (const auto& w : want) ASSERT_EQ(w.size(), static_cast<size_t>(generate_));
  expect_same(run(*load("batched", pipeline(R"({"block_size": 4})")), all()), want, "batched");
  // 18 blocks of 4 = 72 slots: the longest prompt (45 tokens) + 20 fits alone, the batch does not.
  uint64_t preemptions = 0;
  expect_same(
      run(*load("small", pipeline(R"({"block_size": 4, "num_blocks": 18})")), all(), &preemptions),
      want, "preempted");
  EXPECT_GT(preemptions, 0u) << "the pool was meant to force preemption";
}

TEST_P(ArchEngine, PrefixCacheEqualsAlone) {
  const auto want = alone();
  auto host = load("prefix", pipeline(R"({"block_size": 4})",
                                      R"(, {"kind": "prefix_cache", "library": "prefix_radix"})"));
  expect_same(run(*host, all(), nullptr, true), want, "prefix cache, cold");
  expect_same(run(*host, all(), nullptr, true), want, "prefix cache, warm");
  for (size_t i = 0; i < prompts_.size(); ++i) {
    EXPECT_EQ(run(*host, {i}, nullptr, true)[0], want[i])
        << GetParam() << ", prefix cache, alone " << i;
  }
  EXPECT_GT(host->engine().stats().kv.num_used_blocks, 0u) << "the prefix cache kept nothing";
}

TEST_P(ArchEngine, SpeculationEqualsAlone) {
  const auto want = alone();
  const std::string ngram =
      R"(, {"kind": "speculator", "library": "spec_decode", "config": {"method": "ngram", "num_speculative_tokens": 3, "min_n": 1, "max_n": 3}})";
  expect_same(run(*load("ngram", pipeline(R"({"block_size": 4})", ngram)), all()), want,
              "n-gram speculation");
  const std::string skip =
      R"(, {"kind": "speculator", "library": "spec_decode", "config": {"method": "layer_skip", "num_speculative_tokens": 3, "exit_layer": 2}})";
  expect_same(run(*load("skip", pipeline(R"({"block_size": 4})", skip)), all()), want,
              "layer-skip speculation");
  const std::string draft =
      R"(, {"kind": "backend", "name": "draft", "role": "draft", "library": "backend_cpu", "model": ")" +
      draft_model().string() + R"(", "config": )" + config_ +
      R"(}, {"kind": "speculator", "library": "spec_decode", "config": {"method": "draft", "num_speculative_tokens": 3}})";
  expect_same(run(*load("draft", pipeline(R"({"block_size": 4})", draft)), all()), want,
              "draft-model speculation");
}

#ifndef PLINTH_REAL_GEMMA3
INSTANTIATE_TEST_SUITE_P(Archs, ArchEngine,
                         ::testing::Values("llama", "llama3", "qwen2", "qwen3", "gemma3", "phi3",
                                           "granite", "olmo2", "smollm3"),
                         [](const ::testing::TestParamInfo<std::string>& i) { return i.param; });
#else
INSTANTIATE_TEST_SUITE_P(Real, ArchEngine, ::testing::Values(kGemma3),
                         [](const ::testing::TestParamInfo<std::string>&) {
                           return std::string("gemma3_270m");
                         });
#endif

}  // namespace
}  // namespace plinth
