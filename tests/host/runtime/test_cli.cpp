// The `plinth` executable: --version, plugins list, and manifest check on good and malformed
// manifests (tests/fixtures/manifests/), asserting exit codes and the JSON path in the message;
// manifest check with a draft backend over tiny GGUF files (tiny_gguf.hpp).
#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>

#include "plinth/abi.h"
#include "run_plinth.hpp"
#include "tiny_gguf.hpp"

namespace {

using plinth_test::run_plinth;

const std::string kFixtures = PLINTH_SOURCE_DIR "/tests/fixtures/manifests";

struct Malformed {
  const char* file;     // in malformed/
  const char* path;     // the JSON path the message must name
  const char* message;  // a part of the message
};

// Every manifest mistake (docs/manifest.md, 'Validation and errors') with the path the error must
// name.
const Malformed kMalformed[] = {
    {"syntax_error", "line 3, column 24", "JSON syntax error"},
    {"empty", "line 1, column 1", "JSON syntax error"},
    {"not_object", "$", "a manifest is a JSON object"},
    {"unknown_top_key", "modle", "unknown key; allowed here: model, plugins"},
    {"model_wrong_type", "model", "must be a non-empty string"},
    {"plugins_missing", "plugins", "required"},
    {"plugins_not_array", "plugins", "must be an array"},
    {"plugin_not_object", "plugins[0]", "must be an object"},
    {"unknown_plugin_key", "plugins[1].confg",
     "unknown key; allowed here: kind, library, name, config"},
    {"kind_missing", "plugins[0].kind", "required"},
    {"kind_wrong_type", "plugins[0].kind", "must be a non-empty string"},
    {"unknown_kind", "plugins[3].kind", "unknown kind \"sampler\"; one of backend, kv_cache"},
    {"library_missing_key", "plugins[1].library", "required"},
    {"library_not_found", "plugins[1].library",
     "no library \"kv_nonexistent\" (libplinth_kv_nonexistent.so)"},
    {"library_path_not_found", "plugins[1].library", "no file \"./nope/libplinth_kv.so\""},
    {"library_bad_name", "plugins[1].library", "neither a short name"},
    {"duplicate_kind", "plugins[3].kind", "a second kv_cache"},
    {"duplicate_name", "plugins[1].name", "duplicate plugin name \"p\""},
    {"duplicate_key", "plugins[1].library", "duplicate key"},
    {"missing_scheduler", "plugins", "no scheduler plugin"},
    {"missing_backend", "plugins", "no backend plugin"},
    {"name_wrong_type", "plugins[2].name", "must be a non-empty string"},
    {"config_not_object", "plugins[1].config", "must be an object"},
    {"config_unknown_option", "plugins[1].config.blok_size",
     "unknown option; allowed: block_size, memory_fraction, num_blocks"},
    {"config_wrong_type", "plugins[0].config.memory_mib", "must be an integer, got string \"256\""},
    {"block_size_not_power_of_two", "plugins[1].config.block_size",
     "must be a power of two between 1 and 256, got 24"},
    {"block_size_out_of_range", "plugins[1].config.block_size",
     "must be a power of two between 1 and 256, got 512"},
    {"max_num_seqs_out_of_range", "plugins[2].config.max_num_seqs",
     "must be between 1 and 4096, got 0"},
    {"policy_not_in_enum", "plugins[2].config.policy",
     "must be one of \"fcfs\", \"priority\", got \"lifo\""},
    {"memory_fraction_zero", "plugins[1].config.memory_fraction", "must be > 0 and <= 1, got 0"},
    {"kind_mismatch", "plugins[0].kind", "is a graph_runner plugin, not a backend"},
    {"graph_runner_bad_config", "plugins[3].config.capture_sizes", "unknown option; allowed: none"},
    {"draft_role_not_in_enum", "plugins[3].role",
     "must be \"target\" (the default: runs the top-level `model`) or \"draft\" (runs its own "
     "`model` for the speculator), got \"drafts\""},
    {"draft_without_speculator", "plugins[3]",
     "a draft backend is only used by a speculator: add one (e.g. spec_decode with method draft"},
    {"draft_without_model", "plugins[3].model", "required on a draft backend"},
    {"draft_model_on_target", "plugins[0].model",
     "only a draft backend (\"role\": \"draft\") has its own model"},
    {"draft_second", "plugins[4].role", "a second draft backend"},
    {"draft_model_missing", "plugins[3].model", "no draft model file "},
};

void PrintTo(const Malformed& m, std::ostream* os) {
  *os << m.file;
}

class MalformedManifest : public testing::TestWithParam<Malformed> {};

TEST_P(MalformedManifest, ExitsTwoNamingFileAndJsonPath) {
  const Malformed& m = GetParam();
  std::string file = kFixtures + "/malformed/" + m.file + ".json";
  auto r = run_plinth("manifest check '" + file + "'");
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("error: " + file + ": " + m.path + ": "), std::string::npos) << r.err;
  EXPECT_NE(r.err.find(m.message), std::string::npos) << r.err;
  EXPECT_EQ(r.out, "");
}

INSTANTIATE_TEST_SUITE_P(Fixtures, MalformedManifest, testing::ValuesIn(kMalformed),
                         [](const testing::TestParamInfo<Malformed>& i) {
                           return std::string(i.param.file);
                         });

TEST(Cli, Version) {
  auto r = run_plinth("--version");
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_NE(r.out.find("plinth 0.1.0 (plugin ABI " + std::to_string(PLINTH_ABI_MAJOR) + "." +
                       std::to_string(PLINTH_ABI_MINOR) + ")"),
            std::string::npos)
      << r.out;
}

TEST(Cli, PluginsListShowsNameKindVersionAbiFileAndSkipsRefused) {
  auto r = run_plinth("plugins list --path '" PLINTH_TEST_PLUGIN_DIR "'");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("NAME"), std::string::npos);
  // One row: name, kind, version, ABI, file.
  std::string row_start = "test_kv";
  size_t row = r.out.find("\ntest_kv ");
  ASSERT_NE(row, std::string::npos) << r.out;
  std::string line = r.out.substr(row + 1, r.out.find('\n', row + 1) - row - 1);
  EXPECT_NE(line.find("kv_cache"), std::string::npos) << line;
  EXPECT_NE(line.find("0.1.0"), std::string::npos) << line;
  char abi[32];
  std::snprintf(abi, sizeof(abi), " %d.%d ", PLINTH_ABI_MAJOR, PLINTH_ABI_MINOR);
  EXPECT_NE(line.find(abi), std::string::npos) << line;
  EXPECT_NE(line.find(PLINTH_TEST_PLUGIN_DIR "/libplinth_test_kv.so"), std::string::npos) << line;
  EXPECT_NE(r.out.find("test_abi_older_minor"), std::string::npos);
  // Refused libraries are reported on stderr, not listed.
  EXPECT_EQ(r.out.find("bad_abi_major2"), std::string::npos);
  EXPECT_NE(r.err.find("libplinth_bad_abi_major2.so was built against plinth ABI 2.0"),
            std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find("libplinth_bad_no_entry.so has no symbol plinth_plugin_entry"),
            std::string::npos);
}

TEST(Cli, ManifestCheckPrintsPipelineInStepOrder) {
  auto r = run_plinth("manifest check '" + kFixtures + "/good_no_model.json'");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  size_t sched = r.out.find("1. scheduler.schedule");
  size_t prefix = r.out.find("2. prefix_cache.match");
  size_t kv = r.out.find("3. kv_cache.allocate");
  size_t backend = r.out.find("5. backend.forward");
  ASSERT_NE(sched, std::string::npos) << r.out;
  EXPECT_LT(sched, prefix);
  EXPECT_LT(prefix, kv);
  EXPECT_LT(kv, backend);
  // Effective configs, defaults filled in from each plugin's schema.
  EXPECT_NE(r.out.find(R"(config {"block_size":16,"memory_fraction":0.9})"), std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find(R"("max_num_seqs":64,"policy":"fcfs")"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("memory plan: needs a model"), std::string::npos);
}

TEST(Cli, MissingModelFileIsAConfigError) {
  auto r =
      run_plinth("manifest check '" + kFixtures + "/good_no_model.json' --model /nonexistent.gguf");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find(": --model: no model file /nonexistent.gguf"), std::string::npos) << r.err;
}

// A model file that is not a GGUF (a text file named .gguf, an empty one) fails the check with exit
// 2 naming the file and the offset, before any "OK" (it used to print "manifest ...: OK" and the
// pipeline, then exit 1).
TEST(Cli, ManifestCheckOfANonGgufModelExitsTwoWithoutOk) {
  const auto dir = std::filesystem::temp_directory_path() / "plinth_test_cli_bad_model";
  std::filesystem::create_directories(dir);
  std::ofstream(dir / "text.gguf") << "hello world\n";
  std::ofstream(dir / "empty.gguf").flush();
  for (const char* name : {"text.gguf", "empty.gguf"}) {
    const std::string model = (dir / name).string();
    auto r =
        run_plinth("manifest check '" + kFixtures + "/good_no_model.json' --model '" + model + "'");
    EXPECT_EQ(r.exit_code, 2) << r.err;
    EXPECT_NE(r.err.find("error: " + model + ": offset 0 (magic): "), std::string::npos) << r.err;
    EXPECT_EQ(r.out.find(": OK"), std::string::npos) << r.out;
  }
}

TEST(Cli, LoaderRefusalExitsThreeNamingTheLibrary) {
  auto dir =
      std::filesystem::temp_directory_path() / ("plinth_cli_refusal_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  {
    std::ofstream f(dir / "m.json");
    f << R"({"plugins": [{"kind": "backend", "library": "test_backend"},
              {"kind": "kv_cache", "library": "test_kv"},
              {"kind": "scheduler", "library": "bad_abi_major2"}]})";
  }
  auto r = run_plinth("manifest check '" + (dir / "m.json").string() + "'");
  EXPECT_EQ(r.exit_code, 3);
  EXPECT_NE(r.err.find("libplinth_bad_abi_major2.so was built against plinth ABI 2.0"),
            std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find("rebuild it against this host's SDK"), std::string::npos);
  std::filesystem::remove_all(dir);
}

// A target and a 1-layer draft model of the same vocabulary (or `draft_tokens`), and a manifest
// with a draft backend, in a scratch folder.
struct DraftCheck {
  plinth_test::ScratchDir dir{"plinth_cli_draft"};
  std::string manifest;
  explicit DraftCheck(
      std::vector<std::string> draft_tokens = plinth_test::TinyGguf::default_tokens(32)) {
    plinth_test::TinyGguf target, draft;
    draft.layers = 1;
    draft.tokens = std::move(draft_tokens);
    target.write(dir.path() / "target.gguf");
    draft.write(dir.path() / "draft.gguf");
    manifest = (dir.path() / "m.json").string();
    std::ofstream(manifest) << R"({"model": "target.gguf", "plugins": [
      {"kind": "backend", "library": "test_backend"},
      {"kind": "backend", "library": "test_backend", "role": "draft", "model": "draft.gguf"},
      {"kind": "kv_cache", "library": "test_kv"}, {"kind": "scheduler", "library": "test_scheduler"},
      {"kind": "speculator", "library": "test_spec_probe"}]})";
  }
};

TEST(Cli, ManifestCheckListsTheDraftBackendWithItsModel) {
  DraftCheck d;
  auto r = run_plinth("manifest check '" + d.manifest + "'");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::string draft = (d.dir.path() / "draft.gguf").string();
  EXPECT_NE(r.out.find("draft backend test_backend_draft (plugins[1], driven by the speculator): "
                       "test_backend 0.1.0"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("        draft model " + draft + "\n"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("draft model " + draft +
                       " (plugins[1]): llama, 1 layers, hidden 8, 2 heads (1 KV), vocab 32, the "
                       "same tokens as the target"),
            std::string::npos)
      << r.out;
  // The draft's KV per token (1 layer x 1 KV head x head_dim 4 x K,V x f16 = 16 bytes) is shown
  // apart from the plan of the target's kv_cache (2 layers: 32 bytes per token).
  EXPECT_NE(r.out.find("KV per token:     32 bytes (2 layers"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("draft backend:    \"test_backend_draft\": 16 bytes of KV per token (1 "
                       "layers x 1 KV heads x 4 head_dim x K,V, f16), allocated by the speculator"),
            std::string::npos)
      << r.out;
}

TEST(Cli, ManifestCheckRefusesADraftOfAnotherVocabulary) {
  std::vector<std::string> tokens = plinth_test::TinyGguf::default_tokens(32);
  tokens[3] = "three";
  DraftCheck d(tokens);
  auto r = run_plinth("manifest check '" + d.manifest + "'");
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("error: " + d.manifest + ": plugins[1].model: the draft model " +
                       (d.dir.path() / "draft.gguf").string() + " and the target model " +
                       (d.dir.path() / "target.gguf").string() +
                       " have different vocabularies: token id 3 is \"three\" in the draft and "
                       "\"t3\" in the target (the first id that differs); use a draft model "
                       "trained with the same tokenizer"),
            std::string::npos)
      << r.err;

  DraftCheck sized(plinth_test::TinyGguf::default_tokens(40));
  r = run_plinth("manifest check '" + sized.manifest + "'");
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find(": plugins[1].model: "), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("40 tokens in the draft, 32 in the target"), std::string::npos) << r.err;
}

}  // namespace
