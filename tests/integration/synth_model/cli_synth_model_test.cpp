// `plinth synth-model` end to end: the file it writes loads as SmolLM2-135M's config, `plinth
// generate` on backend_cpu (manifests/cpu.json) produces the tokens asked for from a 2-layer
// synthetic model, a second run with the same seed writes the same bytes, and bad options exit 2
// with a message naming the option.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

#include <nlohmann/json.hpp>

#include "../cli/cli_run.hpp"
#include "gguf_test_files.hpp"
#include "model/gguf.hpp"
#include "model/model_config.hpp"

namespace {

namespace fs = std::filesystem;

const fs::path kPlinth = fs::path(PLINTH_BUILD_DIR) / "plinth";
const fs::path kManifest = fs::path(PLINTH_SOURCE_DIR) / "manifests/cpu.json";

using plinth::test::CliRun;
const auto& quote = plinth::test::shell_quote;
const auto& plinth = plinth::test::run_plinth;

std::string slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

TEST(CliSynthModel, TwoLayerModelRunsOnBackendCpu) {
  plinth::test::TempDir tmp;
  const fs::path model = tmp.path() / "synth.gguf";
  CliRun r =
      plinth("synth-model --layers 2 --seed 5 --dtype q8_0 --output " + quote(model.string()));
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_NE(r.out.find("2 layers"), std::string::npos) << r.out;
  const plinth::ModelConfig c = plinth::read_model_config(*plinth::GgufFile::open(model));
  EXPECT_EQ(c.n_layers, 2u);
  EXPECT_EQ(c.hidden_size, 576u);
  EXPECT_EQ(c.vocab_size, 49152u);

  const fs::path out = tmp.path() / "out.jsonl";
  r = plinth("generate --manifest " + quote(kManifest.string()) + " --model " +
             quote(model.string()) +
             " --prompt 'Hello synthetic world' --max-tokens 6 --ignore-eos --output " +
             quote(out.string()));
  ASSERT_EQ(r.code, 0) << r.out;
  const nlohmann::json j = nlohmann::json::parse(slurp(out));
  ASSERT_EQ(j.at("token_ids").size(), 6u) << j.dump();
  EXPECT_EQ(j.at("generated_tokens"), 6);
  for (const auto& id : j.at("token_ids")) {
    EXPECT_GE(id.get<int>(), 0);
    EXPECT_LT(id.get<int>(), 49152);
  }
}

// A base model has no tokenizer.chat_template (synth-model writes none): `generate --chat`
// refuses, naming --chat-template; with --chat-template it renders; `manifest check` says so.
TEST(CliSynthModel, BaseModelChatNeedsChatTemplate) {
  plinth::test::TempDir tmp;
  const fs::path model = tmp.path() / "base.gguf";
  ASSERT_EQ(plinth("synth-model --layers 1 --output " + quote(model.string())).code, 0);
  ASSERT_FALSE(plinth::GgufFile::open(model)->has("tokenizer.chat_template"));
  const std::string run = "generate --manifest " + quote(kManifest.string()) + " --model " +
                          quote(model.string()) + " --prompt hi --max-tokens 2 --ignore-eos --chat";
  CliRun r = plinth(run);
  EXPECT_NE(r.code, 0) << r.out;
  EXPECT_NE(r.out.find("no tokenizer.chat_template"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("--chat-template"), std::string::npos) << r.out;
  r = plinth(run + " --chat-template chatml");
  EXPECT_EQ(r.code, 0) << r.out;
  // manifest check names the tokenizer and says what chat needs.
  r = plinth("manifest check " + quote(kManifest.string()) + " --model " + quote(model.string()));
  EXPECT_EQ(r.code, 0) << r.out;
  EXPECT_NE(r.out.find("tokenizer: gpt2 (pre smollm)"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("chat template: none (a base model: chat needs --chat-template"),
            std::string::npos)
      << r.out;
}

// Every architecture as a user runs it: synth-model --arch, manifest check (the pipeline, the
// model's features and the KV memory plan), draft-model (its first 2 layers), generate on the
// model and, through spec decoding, with that draft and with layer skip.
class CliSynthArch : public ::testing::TestWithParam<std::string> {};

TEST_P(CliSynthArch, RunsEndToEnd) {
  plinth::test::TempDir tmp;
  const fs::path model = tmp.path() / (GetParam() + ".gguf");
  CliRun r = plinth("synth-model --arch " + GetParam() + " --output " + quote(model.string()));
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_NE(r.out.find("synthetic " + GetParam()), std::string::npos) << r.out;
  const fs::path float_manifest = fs::path(PLINTH_SOURCE_DIR) / "manifests/cpu_float.json";
  r = plinth("manifest check " + quote(float_manifest.string()) + " --model " +
             quote(model.string()));
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_NE(r.out.find("features: "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("memory plan"), std::string::npos) << r.out;

  const fs::path draft = tmp.path() / "draft.gguf";
  r = plinth("draft-model --model " + quote(model.string()) + " --layers 2 --output " +
             quote(draft.string()));
  ASSERT_EQ(r.code, 0) << r.out;
  const auto run_generate = [&](const std::string& extra) {
    const fs::path out = tmp.path() / "out.jsonl";
    const CliRun g = plinth("generate --manifest " + quote(float_manifest.string()) + " --model " +
                            quote(model.string()) +
                            " --prompt 'Hello synthetic world' --max-tokens 8 --ignore-eos "
                            "--output " +
                            quote(out.string()) + extra);
    EXPECT_EQ(g.code, 0) << g.out;
    return nlohmann::json::parse(slurp(out)).at("token_ids");
  };
  const nlohmann::json plain = run_generate("");
  ASSERT_EQ(plain.size(), 8u);
  // The same greedy ids with a spec-decode manifest: layer skip, then the draft model.
  const fs::path skip = tmp.path() / "skip.json";
  std::ofstream(skip) << R"({"plugins": [
    {"kind": "backend", "library": "backend_cpu", "config": {"threads": 2, "matmul": "float", "kv_dtype": "f32"}},
    {"kind": "kv_cache", "library": "kv_paged", "config": {"block_size": 16}},
    {"kind": "scheduler", "library": "scheduler_continuous"},
    {"kind": "speculator", "library": "spec_decode", "config": {"method": "layer_skip", "num_speculative_tokens": 3, "exit_layer": 2}}]})";
  const fs::path with_draft = tmp.path() / "draft.json";
  std::ofstream(with_draft)
      << R"({"plugins": [
    {"kind": "backend", "library": "backend_cpu", "config": {"threads": 2, "matmul": "float", "kv_dtype": "f32"}},
    {"kind": "backend", "name": "draft", "role": "draft", "library": "backend_cpu", "model": ")"
      << draft.string() << R"(", "config": {"threads": 2, "matmul": "float", "kv_dtype": "f32"}},
    {"kind": "kv_cache", "library": "kv_paged", "config": {"block_size": 16}},
    {"kind": "scheduler", "library": "scheduler_continuous"},
    {"kind": "speculator", "library": "spec_decode", "config": {"method": "draft", "num_speculative_tokens": 3}}]})";
  for (const fs::path& m : {skip, with_draft}) {
    const fs::path out = tmp.path() / "spec.jsonl";
    r = plinth("generate --manifest " + quote(m.string()) + " --model " + quote(model.string()) +
               " --prompt 'Hello synthetic world' --max-tokens 8 --ignore-eos --output " +
               quote(out.string()));
    ASSERT_EQ(r.code, 0) << r.out;
    EXPECT_EQ(nlohmann::json::parse(slurp(out)).at("token_ids"), plain) << m;
    r = plinth("manifest check " + quote(m.string()) + " --model " + quote(model.string()));
    EXPECT_EQ(r.code, 0) << r.out;
  }
}

INSTANTIATE_TEST_SUITE_P(Archs, CliSynthArch,
                         ::testing::Values("llama", "llama3", "qwen2", "qwen3", "gemma3", "phi3",
                                           "granite", "olmo2", "smollm3"),
                         [](const ::testing::TestParamInfo<std::string>& i) { return i.param; });

TEST(CliSynthModel, SameSeedSameFile) {
  plinth::test::TempDir tmp;
  const fs::path a = tmp.path() / "a.gguf", b = tmp.path() / "b.gguf";
  ASSERT_EQ(plinth("synth-model --layers 1 --seed 9 --output " + quote(a.string())).code, 0);
  ASSERT_EQ(plinth("synth-model --layers 1 --seed 9 --output " + quote(b.string())).code, 0);
  EXPECT_TRUE(slurp(a) == slurp(b));
}

TEST(CliSynthModel, BadOptionsExit2NamingTheOption) {
  plinth::test::TempDir tmp;
  const std::string out = quote((tmp.path() / "x.gguf").string());
  const struct {
    std::string args, needle;
  } cases[] = {
      {"--layers 0 --output " + out, "--layers"},
      {"--layers 31 --output " + out, "--layers"},
      {"--real-layers 2 --layers 2 --output " + out, "--real-layers"},
      {"--from /nonexistent.gguf --output " + out, "--from"},
      {"--vocab-from /nonexistent.gguf --output " + out, "--vocab-from"},
      {"--output /nonexistent-dir/x.gguf", "--output"},
  };
  for (const auto& c : cases) {
    const CliRun r = plinth("synth-model " + c.args);
    EXPECT_EQ(r.code, 2) << c.args << "\n" << r.out;
    EXPECT_NE(r.out.find(c.needle), std::string::npos) << c.args << "\n" << r.out;
  }
  EXPECT_FALSE(fs::exists(tmp.path() / "x.gguf"));
  EXPECT_NE(plinth("synth-model --dtype q5_k --output " + out).code, 0);  // CLI11 refuses
}

}  // namespace
