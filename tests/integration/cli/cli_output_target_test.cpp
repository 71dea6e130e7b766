// The commands that write files — draft-model, synth-model and generate --output — never replace
// or write into what is not a regular file: a FIFO, a directory, a character device node and a
// symbolic link to a FIFO, each made in a temporary folder (the device node with mknod, numbers
// 1:3 of the null device, never a path under /dev; skipped with a message where mknod is not
// permitted), are refused with exit 2 and a message naming the path and what it is, and each is
// left as it was. A write that fails (the file size limit at 0, `ulimit -f 0` with SIGXFSZ
// ignored, so every write to a regular file fails with EFBIG) ends the command with a non-zero
// exit naming the output, and draft-model leaves no temporary file behind.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "cli_run.hpp"
#include "gguf_test_files.hpp"

namespace {

namespace fs = std::filesystem;

const fs::path kSource = PLINTH_SOURCE_DIR;
const fs::path kModel = kSource / "models/SmolLM2-135M-Instruct.Q4_1.gguf";
const fs::path kManifest = kSource / "manifests/cpu.json";

using plinth::test::CliRun;
const auto& quote = plinth::test::shell_quote;

struct Target {
  fs::path path;
  std::string kind;  // what the message must call it
  fs::file_type type;
};

class CliOutputTarget : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!fs::exists(kModel))
      GTEST_SKIP() << "model missing: run tools/fetch_model (" << kModel << ")";
    const fs::path dir = tmp_.path();
    ASSERT_EQ(mkfifo((dir / "fifo.gguf").c_str(), 0644), 0) << std::strerror(errno);
    targets_.push_back({dir / "fifo.gguf", "is a FIFO (named pipe)", fs::file_type::fifo});
    fs::create_directory(dir / "folder.gguf");
    targets_.push_back({dir / "folder.gguf", "is a directory", fs::file_type::directory});
    fs::create_symlink(dir / "fifo.gguf", dir / "link.gguf");
    targets_.push_back({dir / "link.gguf", "is a symbolic link to a FIFO", fs::file_type::symlink});
    if (mknod((dir / "device.gguf").c_str(), S_IFCHR | 0644, makedev(1, 3)) == 0) {
      targets_.push_back({dir / "device.gguf", "is a character device", fs::file_type::character});
    } else {
      std::printf("note: the character device case is skipped: mknod is not permitted here (%s)\n",
                  std::strerror(errno));
    }
    std::ofstream(dir / "in.jsonl") << R"({"prompt": "Hi", "max_tokens": 2})"
                                    << "\n";
  }

  // Runs `plinth ARGS` under a 60 s timeout, so that a command blocking on the FIFO fails the
  // test instead of hanging it.
  static CliRun plinth(const std::string& args) {
    return plinth::test::run_shell("timeout 60 " + plinth::test::plinth_command() + " " + args +
                                   " 2>&1");
  }

  // Every refusal: exit 2, the path and its kind named, the target untouched, nothing new in
  // the folder (no temporary file).
  void expect_refused(const std::string& args_before_output, const std::string& args_after = "") {
    const auto before = entries();
    for (const Target& t : targets_) {
      SCOPED_TRACE(t.path.string());
      CliRun r = plinth(args_before_output + " --output " + quote(t.path.string()) + args_after);
      EXPECT_EQ(r.code, 2) << r.out;
      EXPECT_NE(r.out.find("--output: " + t.path.string() + " " + t.kind), std::string::npos)
          << r.out;
      EXPECT_EQ(fs::symlink_status(t.path).type(), t.type);
      EXPECT_EQ(entries(), before);
    }
    EXPECT_TRUE(fs::is_fifo(tmp_.path() / "fifo.gguf"));
  }

  std::vector<std::string> entries() const {
    std::vector<std::string> names;
    for (const auto& e : fs::directory_iterator(tmp_.path()))
      names.push_back(e.path().filename().string());
    std::sort(names.begin(), names.end());
    return names;
  }

  plinth::test::TempDir tmp_;
  std::vector<Target> targets_;
};

TEST_F(CliOutputTarget, DraftModelRefusesWhatIsNotARegularFile) {
  expect_refused("draft-model --model " + quote(kModel.string()) + " --layers 2");
}

TEST_F(CliOutputTarget, SynthModelRefusesWhatIsNotARegularFile) {
  expect_refused("synth-model --vocab-only --layers 0");
}

TEST_F(CliOutputTarget, GenerateRefusesWhatIsNotARegularFile) {
  expect_refused("generate --manifest " + quote(kManifest.string()) + " --prompts-file " +
                 quote((tmp_.path() / "in.jsonl").string()));
}

// With the file size limit at 0 every write to a regular file fails (EFBIG): each command exits
// non-zero naming the output and the reason, and no temporary file stays behind.
TEST_F(CliOutputTarget, WriteErrorsEndWithANonZeroExit) {
  const auto limited = [](const std::string& args) {
    return plinth::test::run_shell("trap '' XFSZ; ulimit -f 0; timeout 60 " +
                                   plinth::test::plinth_command() + " " + args + " 2>&1");
  };
  const auto before = entries();
  const fs::path draft = tmp_.path() / "draft.gguf";
  CliRun d = limited("draft-model --model " + quote(kModel.string()) + " --layers 2 --output " +
                     quote(draft.string()));
  EXPECT_EQ(d.code, 2) << d.out;
  EXPECT_NE(d.out.find("--output: cannot write " + draft.string()), std::string::npos) << d.out;
  EXPECT_NE(d.out.find("File too large"), std::string::npos) << d.out;
  EXPECT_EQ(entries(), before) << "a temporary or partial draft was left behind";

  const fs::path synth = tmp_.path() / "synth.gguf";
  CliRun s = limited("synth-model --vocab-only --layers 0 --output " + quote(synth.string()));
  EXPECT_EQ(s.code, 2) << s.out;
  EXPECT_NE(s.out.find("File too large"), std::string::npos) << s.out;
  EXPECT_EQ(entries(), before);

  const fs::path out = tmp_.path() / "out.jsonl";
  CliRun g =
      limited("generate --manifest " + quote(kManifest.string()) + " --prompts-file " +
              quote((tmp_.path() / "in.jsonl").string()) + " --output " + quote(out.string()));
  EXPECT_EQ(g.code, 1) << g.out;
  EXPECT_NE(g.out.find("cannot write the results to --output " + out.string() + ": File too large"),
            std::string::npos)
      << g.out;
}

}  // namespace
