// `plinth generate` as a user runs it: a streamed completion with its figures, a JSONL batch, and
// every kind of bad input the main-job issue names answered with a message and exit code 2.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "cli_run.hpp"
#include "gguf_test_files.hpp"

namespace {

namespace fs = std::filesystem;

const fs::path kSource = PLINTH_SOURCE_DIR;
const fs::path kPlinth = fs::path(PLINTH_BUILD_DIR) / "plinth";
const fs::path kModel = kSource / "models/SmolLM2-135M-Instruct.Q4_1.gguf";
const fs::path kManifest = kSource / "manifests/cpu.json";

using plinth::test::CliRun;
using plinth::test::run_plinth;
const auto& quote = plinth::test::shell_quote;

// `plinth generate --manifest manifests/cpu.json ARGS`.
CliRun run(const std::string& args) {
  return run_plinth("generate --manifest " + quote(kManifest.string()) + " " + args);
}

class CliGenerate : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!fs::exists(kModel))
      GTEST_SKIP() << "model missing: run tools/fetch_model (" << kModel << ")";
  }
};

TEST_F(CliGenerate, StreamsACompletionAndPrintsFigures) {
  CliRun r = run("--prompt " + quote("The capital of France is") + " --max-tokens 8");
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_NE(r.out.find("Paris"), std::string::npos) << r.out;
  for (const char* figure : {"prompt tokens", "generated tokens", "TTFT", "TPOT", "tokens/s"}) {
    EXPECT_NE(r.out.find(figure), std::string::npos) << figure << " missing in:\n" << r.out;
  }
}

// The default manifest's backend_cpu names at start-up the path `"matmul": "auto"` took and why
// (root README: `plinth --log-level info generate ...`).
TEST_F(CliGenerate, StartUpLogSaysWhichMatmulPathAutoTook) {
  CliRun r = run_plinth("--log-level info generate --manifest " + quote(kManifest.string()) +
                        " --prompt Hi --max-tokens 1");
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_TRUE(r.out.find("matmul auto -> int8 (") != std::string::npos ||
              r.out.find("matmul auto -> float (no AVX2") != std::string::npos)
      << r.out;
}

// The global option also after the subcommand (docs/server.md: "pass --log-level info"), where
// it used to stop with "The following arguments were not expected: info --log-level".
TEST_F(CliGenerate, LogLevelIsAcceptedAfterTheSubcommand) {
  CliRun r = run("--log-level info --prompt Hi --max-tokens 1");
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_NE(r.out.find("[info] loaded plugin backend_cpu"), std::string::npos) << r.out;
  CliRun bad = run("--log-level loud --prompt Hi --max-tokens 1");
  EXPECT_EQ(bad.code, 2) << bad.out;
  EXPECT_NE(bad.out.find("--log-level"), std::string::npos) << bad.out;
}

TEST_F(CliGenerate, PromptsFileRunsAsOneBatchAndWritesJsonLines) {
  fs::path dir = fs::temp_directory_path() / "plinth_cli_generate";
  fs::create_directories(dir);
  std::ofstream(dir / "in.jsonl")
      << R"({"prompt": "The capital of France is", "max_tokens": 4})"
         "\n"
      << R"({"messages": [{"role": "user", "content": "Hi"}], "max_tokens": 3})"
         "\n";
  CliRun r = run("--prompts-file " + quote((dir / "in.jsonl").string()) + " --output " +
                 quote((dir / "out.jsonl").string()));
  ASSERT_EQ(r.code, 0) << r.out;
  std::ifstream in(dir / "out.jsonl");
  std::string line;
  int lines = 0;
  std::vector<bool> seen(2, false);
  // Lines come in the order the requests finish; "index" is the input line's.
  while (std::getline(in, line)) {
    auto j = nlohmann::json::parse(line);
    const int index = j.at("index").get<int>();
    ASSERT_TRUE(index == 0 || index == 1) << line;
    EXPECT_FALSE(seen[index]) << line;
    seen[index] = true;
    EXPECT_EQ(j.at("finish_reason"), "length");
    EXPECT_EQ(j.at("token_ids").size(), index == 0 ? 4u : 3u);
    EXPECT_GT(j.at("ttft_s").get<double>(), 0.0);
    ++lines;
  }
  EXPECT_EQ(lines, 2);
}

// Each bad input: exit code 2 and a message naming what is wrong.
struct BadInput {
  const char* name;
  std::string args;
  std::string expect;
};

TEST_F(CliGenerate, ChatTemplateByNameOrFileReplacesTheModels) {
  const std::string chatml = (kSource / "tests/fixtures/chat_templates/chatml.jinja").string();
  const CliRun by_name =
      run("--chat --chat-template chatml --prompt 'What is 2+2?' --max-tokens 6");
  const CliRun by_file =
      run("--chat --chat-template " + quote(chatml) + " --prompt 'What is 2+2?' --max-tokens 6");
  const CliRun own = run("--chat --prompt 'What is 2+2?' --max-tokens 6");
  ASSERT_EQ(by_name.code, 0) << by_name.out;
  ASSERT_EQ(by_file.code, 0) << by_file.out;
  ASSERT_EQ(own.code, 0) << own.out;
  // The same template: the same prompt (no default system prompt: OpenHermes' ChatML has none).
  const auto completion = [](const std::string& out) {
    return out.substr(0, out.find("requests"));
  };
  const auto figures = [](const std::string& out) {
    return out.substr(out.find("prompt tokens"), 17);
  };
  EXPECT_EQ(completion(by_name.out), completion(by_file.out));
  EXPECT_EQ(figures(by_name.out), "prompt tokens 16 ") << by_name.out;
  EXPECT_EQ(figures(by_file.out), "prompt tokens 16 ") << by_file.out;
  // SmolLM2's own template adds its default system prompt.
  EXPECT_EQ(figures(own.out), "prompt tokens 37 ") << own.out;
}

TEST_F(CliGenerate, BadInputExitsWithCode2AndSaysWhy) {
  plinth::test::TempDir tmp;
  plinth::GgufWriter w;  // a valid GGUF of another architecture
  w.add_string("general.architecture", "gpt2");
  std::string gpt2 = tmp.write("gpt2.gguf", w.build());
  std::string long_prompt;
  for (int i = 0; i < 9000; ++i) long_prompt += "word ";
  const std::string vicuna_text = "{% for m in messages %}USER: {{ m }}{% endfor %}";
  const std::string vicuna =
      tmp.write("vicuna.jinja", plinth::test::Bytes(vicuna_text.begin(), vicuna_text.end()));
  const BadInput cases[] = {
      {"missing model", "--model /nonexistent/model.gguf --prompt hi", "/nonexistent/model.gguf"},
      {"non-llama architecture", "--model " + quote(gpt2) + " --prompt hi", "gpt2"},
      {"prompt longer than the context", "--prompt " + quote(long_prompt), "context"},
      {"max_tokens 0", "--prompt hi --max-tokens 0", "max_tokens"},
      {"max_tokens negative", "--prompt hi --max-tokens -3", "max_tokens"},
      {"temperature below 0", "--prompt hi --temperature -0.5", "temperature"},
      {"invalid UTF-8", "--prompt " + quote("caf\xC3(\xFF"), "UTF-8"},
      {"no prompt", "", "--prompt"},
      {"option value of the wrong type", "--prompt hi --max-tokens abc", "--max-tokens"},
      {"unknown option", "--prompt hi --bogus", "--bogus"},
      {"unknown chat template", "--chat --chat-template llama-2 --prompt hi",
       "\"llama-2\" is neither a family name (chatml, qwen2.5, qwen3, llama2, llama3"},
      {"unrecognised chat template file",
       "--chat --chat-template " + quote(vicuna) + " --prompt hi",
       "unrecognised chat template \"{% for m in messages %}USER:"},
      {"a conversation the template refuses",
       "--chat --chat-template gemma --system 'Be brief.' --prompt hi",
       "chat message 0 (role \"system\"): the gemma chat template does not support a system role"},
  };
  for (const BadInput& c : cases) {
    CliRun r = run(c.args);
    EXPECT_EQ(r.code, 2) << c.name << ":\n" << r.out;
    EXPECT_NE(r.out.find(c.expect), std::string::npos)
        << c.name << ": no '" << c.expect << "' in:\n"
        << r.out;
    EXPECT_EQ(r.out.find("terminate called"), std::string::npos) << c.name;
  }
  // A usage error also shows the usage line of the subcommand.
  const CliRun r = run("--prompt hi --bogus");
  EXPECT_NE(r.out.find("usage: plinth generate"), std::string::npos) << r.out;
}

// A --prompt run's errors name the option at fault: every line used to start with "--prompt: ",
// so a --max-tokens past the context read `--prompt: key "max_tokens": ...`; `--prompt ""` said
// "give exactly one of --prompt TEXT or --prompts-file FILE.jsonl" although it gave one.
TEST_F(CliGenerate, ErrorsNameTheOptionAtFault) {
  const CliRun big = run("--prompt hi --max-tokens 100000000");
  EXPECT_EQ(big.code, 2) << big.out;
  EXPECT_NE(big.out.find("error: --max-tokens: max_tokens = 100000000: must be in [1, "),
            std::string::npos)
      << big.out;
  EXPECT_EQ(big.out.find("--prompt"), std::string::npos) << big.out;
  const CliRun empty = run("--prompt ''");
  EXPECT_EQ(empty.code, 2) << empty.out;
  EXPECT_NE(empty.out.find("error: --prompt: the prompt is empty"), std::string::npos) << empty.out;
  EXPECT_EQ(empty.out.find("exactly one"), std::string::npos) << empty.out;
  const CliRun empty_file = run("--prompts-file ''");
  EXPECT_EQ(empty_file.code, 2) << empty_file.out;
  EXPECT_NE(empty_file.out.find("error: --prompts-file: cannot open \"\""), std::string::npos)
      << empty_file.out;
  const CliRun both = run("--prompt hi --prompts-file x.jsonl");
  EXPECT_EQ(both.code, 2) << both.out;
  EXPECT_NE(both.out.find("give exactly one of --prompt"), std::string::npos) << both.out;
}

TEST(Cli, NoSubcommandPrintsTheHelpAndAnUnknownOneIsAUsageError) {
  const CliRun help = run_plinth("");
  EXPECT_EQ(help.code, 0) << help.out;
  EXPECT_NE(help.out.find("Subcommands:"), std::string::npos) << help.out;
  EXPECT_NE(help.out.find("generate"), std::string::npos) << help.out;
  const CliRun bad = run_plinth("frobnicate");
  EXPECT_EQ(bad.code, 2) << bad.out;
  EXPECT_NE(bad.out.find("frobnicate"), std::string::npos) << bad.out;
  EXPECT_NE(bad.out.find("usage: plinth"), std::string::npos) << bad.out;
}

}  // namespace
