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
