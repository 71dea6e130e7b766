// A draft backend on the real model: backend_cpu twice (target and draft, both SmolLM2-135M), the
// speculator (test_spec_probe) receiving the draft backend and model, the draft backend computing
// the same logits as the target through the ref the speculator got, with KV it allocated itself;
// and the vocabulary check against a draft of another vocabulary (Pipeline, manifest check and
// generate). Skips without the model file or the backend_cpu plugin.
#include <gtest/gtest.h>

#include <spdlog/sinks/null_sink.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <vector>

#include "model/model_desc.hpp"
#include "run_plinth.hpp"
#include "runtime/call.hpp"
#include "runtime/manifest.hpp"
#include "runtime/pipeline.hpp"
#include "spec_probe.h"
#include "tiny_gguf.hpp"

namespace {

using namespace plinth;
namespace fs = std::filesystem;

const std::string kModel = PLINTH_SOURCE_DIR "/models/SmolLM2-135M-Instruct.Q4_1.gguf";
const std::string kBackendCpu = PLINTH_PLUGIN_DIR "/libplinth_backend_cpu.so";

class DraftOnRealModel : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!fs::exists(kModel)) GTEST_SKIP() << "no model at " << kModel << ": run tools/fetch_model";
    if (!fs::exists(kBackendCpu))
      GTEST_SKIP() << "backend_cpu is not built (" << kBackendCpu << ")";
    setenv("PLINTH_PLUGIN_PATH", PLINTH_TEST_PLUGIN_DIR, 1);
  }
  // backend_cpu as target and as draft (plugins[1]) over `draft_model`.
  fs::path write_manifest(const fs::path& draft_model) {
    fs::path m = dir_.path() / "m.json";
    std::ofstream(m) << R"({"model": ")" << kModel << R"(", "plugins": [
      {"kind": "backend", "library": ")"
                     << kBackendCpu << R"(", "config": {"threads": 1}},
      {"kind": "backend", "library": ")"
                     << kBackendCpu << R"(", "role": "draft", "model": ")" << draft_model.string()
                     << R"(", "config": {"threads": 1}},
      {"kind": "kv_cache", "library": "test_kv", "config": {"num_blocks": 8}},
      {"kind": "scheduler", "library": "test_scheduler"},
      {"kind": "speculator", "library": "test_spec_probe"}]})";
    return m;
  }
  plinth_test::ScratchDir dir_{"plinth_draft_real"};
  HostContext host_{
      std::make_shared<spdlog::logger>("test", std::make_shared<spdlog::sinks::null_sink_st>())};
};

// Runs `tokens` at positions start.. of one sequence in block 0 on `b` (KV allocated, earlier
// positions already in it); the logits of the last token.
std::vector<float> run(const plinth_backend_ref& b, const std::vector<int32_t>& tokens,
                       int32_t start = 0) {
  const auto n = static_cast<int32_t>(tokens.size());
  std::vector<int32_t> positions(n);
  for (int32_t i = 0; i < n; ++i) positions[i] = start + i;
  const int32_t query_start[] = {0, n}, seq_lens[] = {start + n}, block_table[] = {0},
                logits_index[] = {n - 1};
  plinth_batch batch{};
  batch.struct_size = sizeof(batch);
  batch.num_tokens = static_cast<uint32_t>(n);
  batch.num_seqs = 1;
  batch.token_ids = tokens.data();
  batch.positions = positions.data();
  batch.query_start = query_start;
  batch.seq_lens = seq_lens;
  batch.block_tables = block_table;
  batch.max_blocks_per_seq = 1;
  batch.block_size = 16;
  batch.slot_mapping = positions.data();  // block 0: slot = position
  batch.num_logits = 1;
  batch.logits_indices = logits_index;
  plinth_forward_output out{};
  out.struct_size = sizeof(out);
  call("forward", [&](plinth_error* e) { return b.vtable->forward(b.instance, &batch, &out, e); });
  return std::vector<float>(out.logits, out.logits + out.vocab_size);
}

size_t argmax(const std::vector<float>& v) {
  return static_cast<size_t>(std::max_element(v.begin(), v.end()) - v.begin());
}

TEST_F(DraftOnRealModel, TheSpeculatorDrivesTheDraftBackendWithItsOwnKv) {
  LoadedModel target = load_model(kModel);
  Manifest m = load_manifest(write_manifest(kModel));
  auto p = Pipeline::create(m, target, host_);
  ASSERT_TRUE(p->draft_backend());
  SpeculatorRef s = p->speculator();
  const auto* r = static_cast<const plinth_test_spec_probe*>(
      s.vtable->lifecycle.get_extension(s.instance, PLINTH_TEST_EXT_SPEC_PROBE));
  ASSERT_NE(r, nullptr);
  EXPECT_EQ(r->draft_backend.instance, p->draft_backend().instance);
  EXPECT_NE(r->draft_backend.instance, r->backend.instance);
  ASSERT_NE(r->draft_model, nullptr);
  EXPECT_EQ(r->draft_model, p->draft_model()->desc->get());
  EXPECT_EQ(r->draft_model->config.vocab_size, 49152u);
  EXPECT_EQ(r->draft_layout_status, PLINTH_OK);
  EXPECT_EQ(r->draft_layout.n_layers, 30u);

  // The speculator allocates the draft's KV itself; the target's is allocated apart.
  const plinth_backend_ref draft = r->draft_backend;
  const plinth_backend_ref tgt = r->backend;
  call("draft.allocate_kv",
       [&](plinth_error* e) { return draft.vtable->allocate_kv(draft.instance, 2, 16, e); });
  call("target.allocate_kv",
       [&](plinth_error* e) { return tgt.vtable->allocate_kv(tgt.instance, 2, 16, e); });
  const std::vector<int32_t> prompt = {1, 504, 3458, 282, 253, 1345};
  const std::vector<float> from_target = run(tgt, prompt);
  const std::vector<float> from_draft = run(draft, prompt);
  ASSERT_EQ(from_draft.size(), 49152u);
  EXPECT_EQ(from_draft, from_target);  // the same model file through the same code

  // Separate KV: the draft's first 5 positions, then other tokens into the target's block 0;
  // the draft's decode of the 6th token reads its own KV and gives the 6-token prefill's logits.
  run(draft, {prompt.begin(), prompt.end() - 1});
  run(tgt, {1, 9906, 28, 17, 42});
  const std::vector<float> decoded = run(draft, {prompt.back()}, 5);
  EXPECT_EQ(argmax(decoded), argmax(from_target));
  float max_diff = 0;
  for (size_t i = 0; i < decoded.size(); ++i)
    max_diff = std::max(max_diff, std::abs(decoded[i] - from_target[i]));
  EXPECT_LT(max_diff, 1e-3f);
  // ... while the target, decoding the same token over the other tokens' KV, does not.
  const std::vector<float> over_other = run(tgt, {prompt.back()}, 5);
  float other_diff = 0;
  for (size_t i = 0; i < over_other.size(); ++i)
    other_diff = std::max(other_diff, std::abs(over_other[i] - from_target[i]));
  EXPECT_GT(other_diff, 1e-1f);
}

TEST_F(DraftOnRealModel, ADraftOfAnotherVocabularyIsRefusedAtStartAndByManifestCheck) {
  const fs::path tiny = plinth_test::TinyGguf{}.write(dir_.path() / "tiny.gguf");  // 32 tokens
  fs::path mf = write_manifest(tiny);
  LoadedModel target = load_model(kModel);
  try {
    Pipeline::create(load_manifest(mf), target, host_);
    FAIL() << "a 32-token draft for a 49152-token target was accepted";
  } catch (const ManifestError& e) {
    EXPECT_EQ(e.json_path(), "plugins[1].model");
    EXPECT_NE(e.message().find("32 tokens in the draft, 49152 in the target"), std::string::npos)
        << e.what();
  }
  auto r = plinth_test::run_plinth("manifest check '" + mf.string() + "'");
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find(mf.string() + ": plugins[1].model: the draft model " + tiny.string()),
            std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find("use a draft model trained with the same tokenizer"), std::string::npos);
  // ... and by `plinth generate` at start-up (EngineHost), before anything runs.
  r = plinth_test::run_plinth("generate --manifest '" + mf.string() +
                              "' --prompt hi --max-tokens 1");
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find(mf.string() + ": plugins[1].model: the draft model " + tiny.string()),
            std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find("32 tokens in the draft, 49152 in the target"), std::string::npos) << r.err;

  // The model as its own draft passes, and manifest check lists it.
  r = plinth_test::run_plinth("manifest check '" + write_manifest(kModel).string() + "'");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("draft model " + kModel +
                       " (plugins[1]): llama, 30 layers, hidden 576, 9 heads (3 KV), vocab 49152, "
                       "the same tokens as the target"),
            std::string::npos)
      << r.out;
}

}  // namespace
