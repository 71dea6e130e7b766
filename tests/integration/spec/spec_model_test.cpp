// Speculative decoding on the real model (SmolLM2-135M, backend_cpu with manifests/cpu.json's
// numerics), for each method of spec_decode (ngram, layer_skip, draft with a 8-layer cut of the
// target made by `plinth draft-model`):
//  - temperature 0: the token ids and finish reasons of 64 chat prompts (half input-grounded
//    rewrites, half open-ended; EOS stops on) equal those without a speculator, one request at a
//    time, 16 at once, and 16 at once on a KV pool small enough to preempt (asserted);
//  - a stop token that is the third generated token, max_tokens 5, k = 5: exactly three tokens;
//  - temperature 1: at one position, the frequencies of the tokens sampled with speculation agree
//    with plain sampling (chi-square homogeneity, p = 0.001).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include "app/engine_host.hpp"
#include "runtime/host_context.hpp"
#include "runtime/logging.hpp"

namespace plinth {
namespace {

namespace fs = std::filesystem;

const fs::path kModel = fs::path(PLINTH_SOURCE_DIR) / "models/SmolLM2-135M-Instruct.Q4_1.gguf";
// Written by the ctest fixture draft_model_l8 (tests/CMakeLists.txt: `plinth draft-model`).
const fs::path kDraft = fs::path(PLINTH_BUILD_DIR) / "models/SmolLM2-135M-Instruct.Q4_1.L8.gguf";

const char* const kBackend =
    R"({"kind": "backend", "library": "backend_cpu",
        "config": {"threads": 2, "matmul": "auto", "kv_dtype": "f16"}})";

// `spec`: the speculator's config ("" = none); `draft`: add the draft backend.
fs::path write_manifest(const std::string& name, const std::string& spec, bool draft,
                        uint32_t num_blocks) {
  fs::path dir = fs::temp_directory_path() / "plinth_spec_model";
  fs::create_directories(dir);
  fs::path file = dir / (name + ".json");
  std::ofstream out(file);
  out << R"({"model": ")" << kModel.string() << R"(", "plugins": [)" << kBackend << ",";
  if (draft) {
    out << R"({"kind": "backend", "name": "draft", "role": "draft", "library": "backend_cpu",
               "model": ")"
        << kDraft.string()
        << R"(", "config": {"threads": 2, "matmul": "auto", "kv_dtype": "f16"}},)";
  }
  out << R"({"kind": "kv_cache", "library": "kv_paged", "config": {"block_size": 16)";
  if (num_blocks > 0) out << R"(, "num_blocks": )" << num_blocks;
  out << R"(}}, {"kind": "scheduler", "library": "scheduler_continuous",
     "config": {"max_num_seqs": 16, "max_num_batched_tokens": 512}})";
  if (!spec.empty())
    out << R"(, {"kind": "speculator", "library": "spec_decode", "config": )" << spec << "}";
  out << "]}";
  return file;
}

std::unique_ptr<EngineHost> load(HostContext& host, const fs::path& manifest) {
  EngineHost::Options o;
  o.manifest = manifest;
  return EngineHost::load(o, host);
}

std::vector<std::string> prompts() {
  const char* const snippets[] = {
      "def area(width, height):\n    result = width * height\n    return result\n",
      "for i in range(10):\n    if i % 2 == 0:\n        print(i)\n",
      "int add(int a, int b) {\n  int sum = a + b;\n  return sum;\n}\n",
      "const names = users.map(u => u.name);\nconsole.log(names.join(', '));\n",
  };
  const char* const asks[] = {
      "Rewrite this code with clear variable names, keeping it otherwise identical:",
      "Add a comment above each line of this code:",
      "Repeat this code exactly, then say in one sentence what it does:",
      "Rename every variable in this code to snake_case and show the full code:",
      "Convert this code to use four-space indentation and show it:",
      "Copy this code and add type hints where the language allows:",
      "Show this code again with one blank line between statements:",
      "Extract the function or loop header from this code and repeat it:",
  };
  const char* const topics[] = {"the moon", "a river",   "bread",     "a library",
                                "winter",   "a bicycle", "the ocean", "a garden"};
  const char* const open[] = {"Write a short poem about ", "Explain in three sentences ",
                              "Tell a tiny story about ", "List three facts about "};
  std::vector<std::string> out;
  for (int i = 0; i < 32; ++i) out.push_back(std::string(asks[i % 8]) + "\n\n" + snippets[i / 8]);
  for (int i = 0; i < 32; ++i) out.push_back(std::string(open[i % 4]) + topics[i / 4] + ".");
  return out;
}

struct Result {
  std::vector<int32_t> ids;
  std::string finish;
  bool operator==(const Result&) const = default;
};

struct RunResult {
  std::vector<Result> results;
  EngineStats stats;
};

GenerationRequest greedy(std::vector<int32_t> prompt, int32_t max_tokens) {
  GenerationRequest r;
  r.prompt = std::move(prompt);
  r.params.temperature = 0.0f;
  r.params.max_tokens = max_tokens;
  return r;
}

// batch 0 = everything queued at once; 1 = one request at a time.
RunResult run(EngineHost& h, const std::vector<std::vector<int32_t>>& encoded, bool one_at_a_time) {
  Engine& e = h.engine();
  RunResult r;
  std::vector<uint64_t> ids;
  auto drain = [&] {
    while (e.has_unfinished()) e.step();
  };
  for (size_t i = 0; i < encoded.size(); ++i) {
    ids.push_back(e.add_request(greedy(encoded[i], 12 + static_cast<int32_t>(i % 3) * 6)));
    if (one_at_a_time) drain();
  }
  drain();
  for (uint64_t id : ids) {
    const Sequence* s = e.find(id);
    r.results.push_back({{s->output().begin(), s->output().end()}, *s->finish_reason()});
    e.release(id);
  }
  r.stats = e.stats();
  return r;
}

struct Method {
  const char* name;
  std::string config;
  bool draft;
};

class SpecModel : public ::testing::TestWithParam<Method> {
 protected:
  void SetUp() override {
    if (!fs::exists(kModel))
      GTEST_SKIP() << "model missing: run tools/fetch_model (" << kModel << ")";
    if (GetParam().draft && !fs::exists(kDraft)) {
      GTEST_FAIL() << "draft model missing: " << kDraft
                   << " is made by the ctest fixture (plinth draft-model); run the whole suite";
    }
  }
  HostContext host_{make_stderr_logger(spdlog::level::warn)};
};

TEST_P(SpecModel, GreedyIdsEqualPlainDecoding) {
  const Method& m = GetParam();
  std::unique_ptr<EngineHost> plain = load(host_, write_manifest("plain", "", false, 0));
  std::vector<std::vector<int32_t>> encoded;
  for (const std::string& p : prompts()) encoded.push_back(plain->encode_chat({{"user", p}}));
  const RunResult want = run(*plain, encoded, false);
  plain.reset();

  // adaptive off and a schedule up to 64 sequences: every decode speculates (as far as the KV
  // pool leaves slots), so every verification path is exercised.
  const std::string spec = m.config;
  for (const char* mode : {"one at a time", "16 at once", "16 at once, preempting"}) {
    SCOPED_TRACE(std::string(m.name) + ", " + mode);
    const bool preempt = std::string(mode).find("preempting") != std::string::npos;
    std::unique_ptr<EngineHost> h =
        load(host_, write_manifest(m.name, spec, m.draft, preempt ? 40 : 0));
    const RunResult got = run(*h, encoded, std::string(mode) == "one at a time");
    ASSERT_EQ(got.results.size(), want.results.size());
    for (size_t i = 0; i < want.results.size(); ++i) {
      EXPECT_EQ(got.results[i], want.results[i]) << "prompt " << i;
    }
    EXPECT_GT(got.stats.spec.num_draft_tokens, 0u);
    EXPECT_GT(got.stats.spec.num_accepted_tokens, 0u);
    if (preempt) {
      EXPECT_GT(got.stats.num_preemptions, 0u);
    }
  }
}

TEST_P(SpecModel, StopTokenThirdOfFiveWithFiveDrafts) {
  const Method& m = GetParam();
  std::unique_ptr<EngineHost> plain = load(host_, write_manifest("plain", "", false, 0));
  const std::vector<int32_t> prompt = plain->encode_chat(
      {{"user", "Repeat exactly: alpha beta gamma delta epsilon zeta eta theta iota kappa"}});
  GenerationRequest g = greedy(prompt, 5);
  g.params.ignore_eos = true;
  const uint64_t id = plain->engine().add_request(g);
  while (plain->engine().has_unfinished()) plain->engine().step();
  const std::vector<int32_t> five(plain->engine().find(id)->output().begin(),
                                  plain->engine().find(id)->output().end());
  ASSERT_EQ(five.size(), 5u);
  ASSERT_NE(five[0], five[2]);
  ASSERT_NE(five[1], five[2]);
  plain.reset();

  std::string spec = m.config;
  spec.replace(spec.find("\"num_speculative_tokens\": 4"), 27, "\"num_speculative_tokens\": 5");
  std::unique_ptr<EngineHost> h = load(host_, write_manifest(m.name, spec, m.draft, 0));
  GenerationRequest stop = g;
  stop.params.stop_token_ids = {five[2]};
  const uint64_t a = h->engine().add_request(stop);
  const uint64_t b = h->engine().add_request(g);
  while (h->engine().has_unfinished()) h->engine().step();
  const Sequence* sa = h->engine().find(a);
  const Sequence* sb = h->engine().find(b);
  EXPECT_EQ(std::vector<int32_t>(sa->output().begin(), sa->output().end()),
            std::vector<int32_t>(five.begin(), five.begin() + 3));
  EXPECT_EQ(*sa->finish_reason(), "stop");
  EXPECT_EQ(std::vector<int32_t>(sb->output().begin(), sb->output().end()), five);
  EXPECT_EQ(*sb->finish_reason(), "length");
}

// Chi-square critical value at p = 0.001 for `dof` degrees of freedom (Wilson–Hilferty).
double chi2_critical_001(int dof) {
  const double z = 3.090232;  // the standard normal's 0.999 quantile
  const double k = dof;
  return k * std::pow(1.0 - 2.0 / (9.0 * k) + z * std::sqrt(2.0 / (9.0 * k)), 3.0);
}

TEST_P(SpecModel, SampledTokenFrequenciesAgreeWithPlainSampling) {
  const Method& m = GetParam();
  if (std::string(m.name) != "layer_skip") GTEST_SKIP() << "one method is enough (slow)";
  // The second generated token is where verification first decides (the first comes from the
  // prefill). 600 seeded draws each way, batches of 16 sharing one prompt prefill.
  const int kDraws = 600;
  auto histogram = [&](const std::string& spec) {
    std::unique_ptr<EngineHost> h = load(host_, write_manifest("sample", spec, false, 0));
    const std::vector<int32_t> prompt = h->encode_chat({{"user", "Name a colour."}});
    std::map<int32_t, int> counts;
    for (int i = 0; i < kDraws;) {
      std::vector<uint64_t> ids;
      for (int j = 0; j < 16 && i < kDraws; ++j, ++i) {
        GenerationRequest g = greedy(prompt, 3);  // 3: the second token may get drafts
        g.share_prompt_with_previous = j > 0;     // one prefill per batch (forked prompt KV)
        g.params.temperature = 1.0f;
        g.params.seed = 1000 + i + (spec.empty() ? 0 : 1000000);
        g.params.ignore_eos = true;
        ids.push_back(h->engine().add_request(g));
      }
      while (h->engine().has_unfinished()) h->engine().step();
      for (uint64_t id : ids) {
        counts[h->engine().find(id)->output()[1]]++;
        h->engine().release(id);
      }
    }
    if (!spec.empty()) {
      EXPECT_GT(h->engine().stats().spec.num_accepted_tokens, 0u);
    }
    return counts;
  };
  std::map<int32_t, int> plain = histogram("");
  std::map<int32_t, int> spec = histogram(m.config);
  // Categories with an expected count >= 5 on each side; the rest pooled.
  std::map<int32_t, std::pair<int, int>> cells;
  for (auto [t, n] : plain) cells[t].first = n;
  for (auto [t, n] : spec) cells[t].second = n;
  std::vector<std::pair<int, int>> table;
  std::pair<int, int> rest{0, 0};
  for (auto [t, c] : cells) {
    if (c.first + c.second >= 10) {
      table.push_back(c);
    } else {
      rest.first += c.first;
      rest.second += c.second;
    }
  }
  if (rest.first + rest.second > 0) table.push_back(rest);
  ASSERT_GE(table.size(), 2u) << "the position should not be (nearly) deterministic";
  double stat = 0;
  for (auto [a, b] : table) {
    const double e = (a + b) / 2.0;  // equal sample sizes
    stat += (a - e) * (a - e) / e + (b - e) * (b - e) / e;
  }
  const int dof = static_cast<int>(table.size()) - 1;
  EXPECT_LT(stat, chi2_critical_001(dof)) << table.size() << " categories";
}

// Two independent paths to the same draft model: the GGUF cut to its first 8 layers by
// `plinth draft-model` on a second backend instance, and the target's early exit after layer 8.
// Their greedy drafts, hence every acceptance count, must be identical.
TEST(SpecModelCrossCheck, DraftModelOfEightLayersDraftsLikeLayerSkipAtEight) {
  if (!fs::exists(kModel)) GTEST_SKIP() << "model missing: run tools/fetch_model";
  ASSERT_TRUE(fs::exists(kDraft)) << kDraft << " is made by the ctest fixture draft_model_l8";
  HostContext host{make_stderr_logger(spdlog::level::warn)};
  auto stats = [&](const std::string& name, const std::string& spec, bool draft) {
    std::unique_ptr<EngineHost> h = load(host, write_manifest(name, spec, draft, 0));
    std::vector<std::vector<int32_t>> encoded;
    const std::vector<std::string> all = prompts();
    for (size_t i = 0; i < all.size(); i += 8)
      encoded.push_back(h->encode_chat({{"user", all[i]}}));
    return run(*h, encoded, true).stats.spec;
  };
  const SpecStats skip = stats("ls8", R"({"method": "layer_skip", "exit_layer": 8,
      "num_speculative_tokens": 3, "adaptive": false})",
                               false);
  const SpecStats draft = stats("draft8", R"({"method": "draft", "num_speculative_tokens": 3,
      "adaptive": false})",
                                true);
  EXPECT_GT(skip.num_draft_tokens, 0u);
  EXPECT_EQ(draft.num_drafts, skip.num_drafts);
  EXPECT_EQ(draft.num_draft_tokens, skip.num_draft_tokens);
  EXPECT_EQ(draft.num_accepted_tokens, skip.num_accepted_tokens);
  EXPECT_EQ(draft.accepted_per_position, skip.accepted_per_position);
}

INSTANTIATE_TEST_SUITE_P(
    Methods, SpecModel,
    ::testing::Values(
        Method{"ngram",
               R"({"method": "ngram", "num_speculative_tokens": 4, "min_n": 1, "max_n": 3,
                   "adaptive": false})",
               false},
        Method{"layer_skip",
               R"({"method": "layer_skip", "num_speculative_tokens": 4, "exit_layer": 12,
                   "adaptive": false, "draft_len_schedule": [{"max_batch_size": 64,
                   "num_speculative_tokens": 4}]})",
               false},
        Method{"draft",
               R"({"method": "draft", "num_speculative_tokens": 4, "adaptive": false,
                   "draft_len_schedule": [{"max_batch_size": 64, "num_speculative_tokens": 4}]})",
               true}),
    [](const ::testing::TestParamInfo<Method>& i) { return std::string(i.param.name); });

}  // namespace
}  // namespace plinth
