// `plinth draft-model` as a user runs it: a draft of the real model's first 8 layers that
// `plinth generate` runs, an existing output replaced whole, and every bad input answered with a
// message naming the option and the fix, exit code 2 and no file left at the output path.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <regex>
#include <string>

#include "cli_run.hpp"
#include "gguf_test_files.hpp"
#include "model/gguf.hpp"

namespace {

namespace fs = std::filesystem;

const fs::path kSource = PLINTH_SOURCE_DIR;
const fs::path kPlinth = fs::path(PLINTH_BUILD_DIR) / "plinth";
const fs::path kModel = kSource / "models/SmolLM2-135M-Instruct.Q4_1.gguf";
const fs::path kManifest = kSource / "manifests/cpu.json";

using plinth::test::CliRun;
const auto& quote = plinth::test::shell_quote;
const auto& plinth = plinth::test::run_plinth;

std::string draft_args(const std::string& model, const std::string& layers,
                       const std::string& output) {
  return "draft-model --model " + quote(model) + " --layers " + layers + " --output " +
         quote(output);
}

std::vector<std::string> files_in(const fs::path& dir) {
  std::vector<std::string> names;
  for (const auto& e : fs::directory_iterator(dir)) names.push_back(e.path().filename().string());
  std::sort(names.begin(), names.end());
  return names;
}

class CliDraftModel : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!fs::exists(kModel))
      GTEST_SKIP() << "model missing: run tools/fetch_model (" << kModel << ")";
  }
  plinth::test::TempDir tmp_;
};

TEST_F(CliDraftModel, WritesADraftThatGenerateRuns) {
  const fs::path out = tmp_.path() / "draft.gguf";
  CliRun r = plinth(draft_args(kModel.string(), "8", out.string()));
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_NE(r.out.find("the first 8 of 30 layers"), std::string::npos) << r.out;
  EXPECT_EQ(files_in(tmp_.path()), std::vector<std::string>{"draft.gguf"});  // no temporary
  {
    const auto draft = plinth::GgufFile::open(out.string());
    EXPECT_EQ(draft->get_uint("llama.block_count"), 8u);
    EXPECT_EQ(draft->find_tensor("blk.8.attn_q.weight"), nullptr);
    EXPECT_NE(draft->find_tensor("blk.7.attn_q.weight"), nullptr);
  }

  CliRun g = plinth("generate --manifest " + quote(kManifest.string()) + " --model " +
                    quote(out.string()) + " --prompt " + quote("The capital of France is") +
                    " --max-tokens 8 --ignore-eos");
  ASSERT_EQ(g.code, 0) << g.out;
  EXPECT_NE(g.out.find("generated tokens 8"), std::string::npos) << g.out;
}

TEST_F(CliDraftModel, ReplacesAnExistingOutputWhole) {
  const fs::path out = tmp_.path() / "draft.gguf";
  std::ofstream(out) << "an older file";
  CliRun r = plinth(draft_args(kModel.string(), "2", out.string()));
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_EQ(plinth::GgufFile::open(out.string())->get_uint("llama.block_count"), 2u);
  EXPECT_EQ(files_in(tmp_.path()), std::vector<std::string>{"draft.gguf"});
}

struct BadInput {
  const char* name;
  std::string args;
  std::vector<std::string> expect;  // each in the output
};

TEST_F(CliDraftModel, BadInputExitsWithCode2AndSaysWhy) {
  const std::string m = kModel.string();
  const fs::path out = tmp_.path() / "out.gguf";
  const std::string o = out.string();
  const fs::path link = tmp_.path() / "link.gguf";  // another name of the input
  fs::create_symlink(kModel, link);
  // A directory where the output cannot be created: read-only, or /sys where even root cannot.
  const fs::path ro = tmp_.path() / "ro";
  fs::create_directory(ro);
  fs::permissions(ro, fs::perms::owner_read | fs::perms::owner_exec);
  const fs::path unwritable = (::geteuid() != 0 ? ro : fs::path("/sys")) / "out.gguf";
  const fs::path not_gguf = tmp_.path() / "text.gguf";
  std::ofstream(not_gguf) << "not a model";

  const BadInput cases[] = {
      {"missing model",
       draft_args("/nonexistent/m.gguf", "8", o),
       {"--model", "/nonexistent/m.gguf", "does not exist", "tools/fetch_model"}},
      {"model is a directory",
       draft_args(tmp_.path().string(), "8", o),
       {"--model", "not a regular file"}},
      {"model is not GGUF", draft_args(not_gguf.string(), "8", o), {"--model", "bad magic"}},
      {"layers 0", draft_args(m, "0", o), {"--layers", "outside 1..29", "has 30 blocks"}},
      {"layers = block_count", draft_args(m, "30", o), {"--layers", "outside 1..29"}},
      {"layers above block_count", draft_args(m, "31", o), {"--layers", "outside 1..29"}},
      {"layers negative", draft_args(m, "-1", o), {"--layers", "outside 1..29"}},
      {"output is the input", draft_args(m, "8", m), {"--output", "is the input model itself"}},
      {"output is a link to the input",
       draft_args(m, "8", link.string()),
       {"--output", "is the input model itself"}},
      {"output is a directory",
       draft_args(m, "8", tmp_.path().string()),
       {"--output", "is a directory", "draft.gguf"}},
      {"output directory missing",
       draft_args(m, "8", (tmp_.path() / "no/dir/x.gguf").string()),
       {"--output", "does not exist", "create it"}},
      {"output not writable",
       draft_args(m, "8", unwritable.string()),
       {"--output", unwritable.string(), "cannot create a temporary file next to",
        "choose another path"}},
  };
  for (const BadInput& c : cases) {
    CliRun r = plinth(c.args);
    EXPECT_EQ(r.code, 2) << c.name << ":\n" << r.out;
    for (const std::string& e : c.expect) {
      EXPECT_NE(r.out.find(e), std::string::npos) << c.name << ": no '" << e << "' in:\n" << r.out;
    }
    EXPECT_EQ(r.out.find("terminate called"), std::string::npos) << c.name;
    EXPECT_FALSE(fs::exists(out)) << c.name << " left " << out;
    EXPECT_FALSE(fs::exists(unwritable)) << c.name;
  }
  fs::permissions(ro, fs::perms::owner_all);
  std::vector<std::string> left = files_in(tmp_.path());
  EXPECT_EQ(left, (std::vector<std::string>{"link.gguf", "ro", "text.gguf"}));  // no temporary
  EXPECT_TRUE(fs::is_empty(ro));

  // Options missing or not numbers: CLI11's message naming the option, non-zero exit.
  for (const std::string& args :
       {std::string("draft-model --layers 8 --output ") + quote(o),
        "draft-model --model " + quote(m) + " --output " + quote(o),
        "draft-model --model " + quote(m) + " --layers 8",
        "draft-model --model " + quote(m) + " --layers eight --output " + quote(o)}) {
    CliRun r = plinth(args);
    EXPECT_NE(r.code, 0) << args << ":\n" << r.out;
    EXPECT_NE(r.out.find("--"), std::string::npos) << r.out;
    EXPECT_FALSE(fs::exists(out)) << args;
  }
}

// The model is untouched by a refused run that names it as the output too.
TEST_F(CliDraftModel, TheInputIsNeverWritten) {
  const auto before = fs::last_write_time(kModel);
  const auto size = fs::file_size(kModel);
  CliRun r = plinth(draft_args(kModel.string(), "8", kModel.string()));
  EXPECT_EQ(r.code, 2) << r.out;
  EXPECT_EQ(fs::last_write_time(kModel), before);
  EXPECT_EQ(fs::file_size(kModel), size);
}

}  // namespace
