// Bad kv_cache / scheduler / speculator options, as a user meets them: `plinth manifest check` and
// startup
// (`plinth generate`) refuse each with a message naming the option and the smallest value that
// works. Config mistakes exit with 2.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <utility>
#include <vector>

namespace {

namespace fs = std::filesystem;

const fs::path kPlinth = fs::path(PLINTH_BUILD_DIR) / "plinth";
const fs::path kModel = fs::path(PLINTH_SOURCE_DIR) / "models/SmolLM2-135M-Instruct.Q4_1.gguf";

struct CliRun {
  int code;
  std::string out;  // stdout + stderr
};

// `plinth <sub> '<file>' <extra>`; built by appending (GCC 12 warns falsely on "lit" + string).
CliRun run(const char* sub, const fs::path& file, const char* extra = "") {
  std::string cmd = "'";
  cmd.append(kPlinth.string()).append("' ").append(sub).append(" '").append(file.string());
  cmd.append("' ").append(extra).append(" 2>&1");
  FILE* p = popen(cmd.c_str(), "r");
  std::string out;
  std::array<char, 4096> buf{};
  size_t n;
  while ((n = fread(buf.data(), 1, buf.size(), p)) > 0) out.append(buf.data(), n);
  int status = pclose(p);
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, out};
}

fs::path manifest(const std::string& name, const std::string& kv, const std::string& sched) {
  fs::path dir = fs::temp_directory_path() / "plinth_continuous_bad_config";
  fs::create_directories(dir);
  fs::path file = dir / (name + ".json");
  std::ofstream(file) << R"({"model": ")" << kModel.string() << R"(", "plugins": [
    {"kind": "backend", "library": "backend_cpu", "config": {"threads": 2}},
    {"kind": "kv_cache", "library": "kv_paged", "config": )"
                      << kv << R"(},
    {"kind": "scheduler", "library": "scheduler_continuous", "config": )"
                      << sched << "}]}";
  return file;
}

struct Case {
  const char* name;
  fs::path file;
  std::vector<std::string> expect;  // substrings of the message
};

constexpr const char* kCheck = "manifest check";
constexpr const char* kGenerate = "generate --manifest";
constexpr const char* kGenerateArgs = "--prompt hi --max-tokens 1";

void expect_refused(const Case& c, const char* sub, const char* extra, int code) {
  CliRun r = run(sub, c.file, extra);
  EXPECT_EQ(r.code, code) << c.name << " (" << sub << "):\n" << r.out;
  for (const std::string& e : c.expect) {
    EXPECT_NE(r.out.find(e), std::string::npos) << c.name << ": no '" << e << "' in:\n" << r.out;
  }
}

class BadConfig : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!fs::exists(kModel)) GTEST_SKIP() << "model missing: run tools/fetch_model";
  }
};

TEST_F(BadConfig, SchemaMistakesExit2FromCheckAndStartup) {
  const Case cases[] = {
      {"block_size not a power of two",
       manifest("bs24", R"({"block_size": 24})", "{}"),
       {"plugins[1].config.block_size", "1, 2, 4, 8, 16", "got 24"}},
      {"max_num_seqs 0",
       manifest("seqs0", "{}", R"({"max_num_seqs": 0})"),
       {"plugins[2].config.max_num_seqs", "between 1 and", "got 0"}},
  };
  for (const Case& c : cases) {
    expect_refused(c, kCheck, "", 2);
    expect_refused(c, kGenerate, kGenerateArgs, 2);
  }
}

// A pool too small for one max-length sequence (max_model_len = the model's context, 8192 tokens
// = 512 blocks of 16): refused by the kv_cache's create, naming num_blocks and 512.
const Case kPoolTooSmall{
    "pool smaller than one max-length sequence",
    manifest("tiny_pool", R"({"block_size": 16, "num_blocks": 4, "max_model_len": 8192})", "{}"),
    {"num_blocks", "num_blocks >= 512", "max_model_len = 8192"}};

TEST_F(BadConfig, PoolTooSmallIsRefusedNamingTheSmallestNumBlocks) {
  // A plugin refusing its config at create is a config error: exit 2, like a schema violation.
  for (auto [sub, extra] : {std::pair{kCheck, ""}, std::pair{kGenerate, kGenerateArgs}}) {
    CliRun r = run(sub, kPoolTooSmall.file, extra);
    EXPECT_EQ(r.code, 2) << r.out;
    for (const std::string& e : kPoolTooSmall.expect) {
      EXPECT_NE(r.out.find(e), std::string::npos) << "no '" << e << "' in:\n" << r.out;
    }
  }
}

// Without max_model_len the pool is only known too small for a request when it arrives: the
// scheduler refuses it, naming num_blocks and the smallest count that would hold it.
TEST_F(BadConfig, RequestLargerThanThePoolNamesNumBlocks) {
  Case c{"request larger than the pool",
         manifest("two_blocks", R"({"block_size": 16, "num_blocks": 2})", "{}"),
         {"can never fit the KV pool", "num_blocks >= 3"}};
  // 40 generated tokens + a 1..2-token prompt need 3 blocks of 16.
  CliRun r = run(kGenerate, c.file, "--prompt hi --max-tokens 40");
  EXPECT_EQ(r.code, 2) << r.out;
  for (const std::string& e : c.expect) {
    EXPECT_NE(r.out.find(e), std::string::npos) << "no '" << e << "' in:\n" << r.out;
  }
}

// cpu.json plus a spec_decode speculator with `spec` as its config; `backend` replaces the
// backend entry (e.g. a backend without the early-exit extension).
fs::path spec_manifest(const std::string& name, const std::string& spec,
                       const std::string& backend = R"({"kind": "backend", "library": "backend_cpu",
                                                       "config": {"threads": 2}})") {
  fs::path dir = fs::temp_directory_path() / "plinth_continuous_bad_config";
  fs::create_directories(dir);
  fs::path file = dir / (name + ".json");
  std::ofstream(file) << R"({"model": ")" << kModel.string() << R"(", "plugins": [)" << backend
                      << R"(, {"kind": "kv_cache", "library": "kv_paged"},
    {"kind": "scheduler", "library": "scheduler_continuous"},
    {"kind": "speculator", "library": "spec_decode", "config": )"
                      << spec << "}]}";
  return file;
}

TEST_F(BadConfig, SpeculatorOptionsThatCannotWorkExit2FromCheckAndStartup) {
  const std::string fake =
      R"({"kind": "backend", "library": ")" +
      (fs::path(PLINTH_BUILD_DIR) / "test_plugins/libplinth_fake_kv_backend.so").string() + R"("})";
  const Case cases[] = {
      {"k = 0",
       spec_manifest("k0", R"({"num_speculative_tokens": 0})"),
       {"plugins[3].config.num_speculative_tokens", "between 1 and 16", "got 0"}},
      {"k above the limit",
       spec_manifest("k17", R"({"num_speculative_tokens": 17})"),
       {"plugins[3].config.num_speculative_tokens", "got 17"}},
      {"min_n > max_n",
       spec_manifest("minmax", R"({"min_n": 5, "max_n": 3})"),
       {"config.min_n = 5", "config.max_n = 3", "lower min_n or raise max_n"}},
      {"exit_layer not below the layer count",
       spec_manifest("exit30", R"({"method": "layer_skip", "exit_layer": 30})"),
       {"config.exit_layer = 30", "[1, 30)", "the model has 30 layers"}},
      {"layer_skip with a backend lacking the extension",
       spec_manifest("noext", R"({"method": "layer_skip"})", fake),
       {"plinth.early_exit/1", "use backend_cpu, or method \"ngram\" or \"draft\""}},
      {"draft without a draft backend",
       spec_manifest("nodraft", R"({"method": "draft"})"),
       {"needs a draft backend", "\"role\": \"draft\"", "plinth draft-model"}},
  };
  for (const Case& c : cases) {
    expect_refused(c, kCheck, "", 2);
    expect_refused(c, kGenerate, kGenerateArgs, 2);
  }
}

// A graph runner needs a backend offering plinth.cuda_stream/1: backend_cpu does not, and
// `manifest check` (which creates every plugin) refuses it as start-up does, exit 3.
TEST_F(BadConfig, AGraphRunnerOverTheCpuBackendIsRefusedByCheckAndStartup) {
  fs::path file = fs::temp_directory_path() / "plinth_continuous_bad_config" / "graph_cpu.json";
  fs::create_directories(file.parent_path());
  std::ofstream(file)
      << R"({"model": ")" << kModel.string() << R"(", "plugins": [
    {"kind": "backend", "library": "backend_cpu", "config": {"threads": 2}},
    {"kind": "kv_cache", "library": "kv_paged", "config": {}},
    {"kind": "scheduler", "library": "scheduler_continuous", "config": {}},
    {"kind": "graph_runner", "library": ")"
      << (fs::path(PLINTH_BUILD_DIR) / "test_plugins/libplinth_test_graph_runner.so").string()
      << R"("}]})";
  const Case c{"graph runner over backend_cpu", file, {"plinth.cuda_stream/1", "backend_cpu"}};
  expect_refused(c, kCheck, "", 3);
  expect_refused(c, kGenerate, kGenerateArgs, 3);
}

}  // namespace
