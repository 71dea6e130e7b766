// Manifest parsing: paths, model resolution, library search order, names, the draft backend
// (`"role": "draft"` with its own `model`).
#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>

#include "runtime/manifest.hpp"
#include "runtime/plugin_search.hpp"

namespace {

namespace fs = std::filesystem;
using plinth::ManifestError;
using plinth::parse_manifest;

const std::string kDir = PLINTH_TEST_PLUGIN_DIR;

const char* kPlugins = R"("plugins": [
  {"kind": "backend", "library": "test_backend", "name": "cpu"},
  {"kind": "kv_cache", "library": "test_kv", "config": {"block_size": 8}},
  {"kind": "scheduler", "library": "test_scheduler"}])";

TEST(Manifest, ResolvesModelAndLibrariesAndKeepsConfig) {
  setenv("PLINTH_PLUGIN_PATH", ("/nonexistent:" + kDir).c_str(), 1);
  auto m = parse_manifest(std::string(R"({"model": "../models/m.gguf", )") + kPlugins + "}",
                          "/work/x/manifests/cpu.json");
  EXPECT_EQ(m.dir, fs::path("/work/x/manifests"));
  EXPECT_EQ(*m.model, fs::path("/work/x/models/m.gguf"));
  ASSERT_EQ(m.plugins.size(), 3u);
  EXPECT_EQ(m.plugins[0].name, "cpu");
  EXPECT_EQ(m.plugins[1].name, "test_kv");
  EXPECT_EQ(m.plugins[1].json_path, "plugins[1]");
  EXPECT_EQ(m.plugins[1].kind, PLINTH_KIND_KV_CACHE);
  EXPECT_EQ(m.plugins[1].library_path, fs::path(kDir) / "libplinth_test_kv.so");
  EXPECT_EQ(m.plugins[1].config, nlohmann::json({{"block_size", 8}}));
  EXPECT_EQ(m.plugins[2].config, nlohmann::json::object());
  ASSERT_NE(m.find(PLINTH_KIND_SCHEDULER), nullptr);
  EXPECT_EQ(m.find(PLINTH_KIND_SPECULATOR), nullptr);
  plinth::ManifestOptions o;
  o.model_override = "/abs/other.gguf";
  EXPECT_EQ(*parse_manifest(std::string("{") + kPlugins + "}", "/w/m.json", o).model,
            fs::path("/abs/other.gguf"));
}

TEST(Manifest, ManifestFolderComesFirstAndPathsAreRelativeToIt) {
  setenv("PLINTH_PLUGIN_PATH", kDir.c_str(), 1);
  fs::path dir = fs::temp_directory_path() / ("plinth_manifest_" + std::to_string(::getpid()));
  fs::create_directories(dir / "sub");
  fs::copy_file(kDir + "/libplinth_test_kv.so", dir / "libplinth_test_kv.so");
  fs::copy_file(kDir + "/libplinth_test_scheduler.so", dir / "sub" / "libplinth_sched.so");
  auto m = parse_manifest(R"({"plugins": [{"kind": "backend", "library": "test_backend"},
    {"kind": "kv_cache", "library": "test_kv"},
    {"kind": "scheduler", "library": "sub/libplinth_sched.so"}]})",
                          dir / "m.json");
  EXPECT_EQ(m.plugins[0].library_path, fs::path(kDir) / "libplinth_test_backend.so");
  EXPECT_EQ(m.plugins[1].library_path, dir / "libplinth_test_kv.so");
  EXPECT_EQ(m.plugins[2].library_path, dir / "sub" / "libplinth_sched.so");
  EXPECT_EQ(m.plugins[2].name, "sched");
  fs::remove_all(dir);
}

TEST(Manifest, SearchPathOrder) {
  setenv("PLINTH_PLUGIN_PATH", "/a:/b", 1);
  auto dirs = plinth::plugin_search_path("/m");
  ASSERT_EQ(dirs.size(), 5u);
  EXPECT_EQ(dirs[0], fs::path("/m"));
  EXPECT_EQ(dirs[1], fs::path("/a"));
  EXPECT_EQ(dirs[2], fs::path("/b"));
  EXPECT_EQ(dirs[3], fs::path(PLINTH_PLUGIN_DIR));  // the build tree's plugins/
  EXPECT_EQ(dirs[4].filename(), "plugins");
  EXPECT_EQ(dirs[4].parent_path().filename(), "plinth");
}

TEST(Manifest, ErrorCarriesFilePathAndMessage) {
  setenv("PLINTH_PLUGIN_PATH", kDir.c_str(), 1);
  try {
    parse_manifest(R"({"plugins": [{"kind": "backend", "library": "test_backend", "config": 3}]})",
                   "/w/m.json");
    FAIL();
  } catch (const ManifestError& e) {
    EXPECT_EQ(e.file(), fs::path("/w/m.json"));
    EXPECT_EQ(e.json_path(), "plugins[0].config");
    EXPECT_EQ(std::string(e.what()), "/w/m.json: plugins[0].config: " + e.message());
  }
}

// --- the draft backend ---------------------------------------------------------------------------

// A manifest of backend, kv_cache and scheduler plus `extra` (JSON objects separated by commas).
std::string with(const std::string& extra) {
  return R"({"model": "../models/target.gguf", "plugins": [
  {"kind": "backend", "library": "test_backend"},
  {"kind": "kv_cache", "library": "test_kv"},
  {"kind": "scheduler", "library": "test_scheduler"})" +
         (extra.empty() ? "" : ",\n  " + extra) + "]}";
}
const std::string kSpec = R"({"kind": "speculator", "library": "test_spec_probe"})";
const std::string kDraft =
    R"({"kind": "backend", "library": "test_backend", "role": "draft", "model": "draft.gguf"})";

// parse_manifest must throw at `path` with a message containing each of `parts`.
void expect_refused(const std::string& text, const std::string& path,
                    const std::vector<std::string>& parts) {
  setenv("PLINTH_PLUGIN_PATH", kDir.c_str(), 1);
  try {
    parse_manifest(text, "/w/manifests/m.json");
    ADD_FAILURE() << "accepted:\n" << text;
  } catch (const ManifestError& e) {
    EXPECT_EQ(e.json_path(), path) << e.what();
    for (const std::string& p : parts)
      EXPECT_NE(e.message().find(p), std::string::npos) << e.what();
  }
}

TEST(ManifestDraft, ParsesRoleAndModelRelativeToTheManifest) {
  setenv("PLINTH_PLUGIN_PATH", kDir.c_str(), 1);
  auto m = parse_manifest(with(kDraft + ", " + kSpec), "/w/manifests/m.json");
  ASSERT_EQ(m.plugins.size(), 5u);
  const plinth::PluginEntry& d = m.plugins[3];
  EXPECT_EQ(d.kind, PLINTH_KIND_BACKEND);
  EXPECT_EQ(d.role, plinth::BackendRole::kDraft);
  EXPECT_TRUE(d.is_draft_backend());
  EXPECT_EQ(*d.model, fs::path("/w/manifests/draft.gguf"));
  EXPECT_EQ(d.name, "test_backend_draft");  // the default name of a draft: library + "_draft"
  EXPECT_EQ(m.draft_backend(), &d);
  // find(BACKEND) is the target, whatever the order.
  EXPECT_EQ(m.find(PLINTH_KIND_BACKEND), &m.plugins[0]);
  EXPECT_EQ(m.plugins[0].role, plinth::BackendRole::kTarget);
  EXPECT_FALSE(m.plugins[0].model.has_value());
  EXPECT_FALSE(m.plugins[0].is_draft_backend());

  // The draft first, an explicit "target", a name of its own, a path above the manifest.
  auto m2 = parse_manifest(
      R"({"plugins": [
    {"kind": "backend", "library": "test_backend", "role": "draft", "name": "small",
     "model": "../models/d.gguf"},
    {"kind": "backend", "library": "test_backend", "role": "target"},
    {"kind": "kv_cache", "library": "test_kv"}, {"kind": "scheduler", "library": "test_scheduler"},
    {"kind": "speculator", "library": "test_spec_probe"}]})",
      "/w/manifests/m.json");
  EXPECT_EQ(m2.draft_backend(), &m2.plugins[0]);
  EXPECT_EQ(m2.plugins[0].name, "small");
  EXPECT_EQ(*m2.plugins[0].model, fs::path("/w/models/d.gguf"));
  EXPECT_EQ(m2.find(PLINTH_KIND_BACKEND), &m2.plugins[1]);
  // --model replaces the target's model only.
  plinth::ManifestOptions o;
  o.model_override = "/abs/other.gguf";
  auto m3 = parse_manifest(with(kDraft + ", " + kSpec), "/w/manifests/m.json", o);
  EXPECT_EQ(*m3.model, fs::path("/abs/other.gguf"));
  EXPECT_EQ(*m3.draft_backend()->model, fs::path("/w/manifests/draft.gguf"));
  // Without a draft there is none.
  EXPECT_EQ(parse_manifest(with(kSpec), "/w/m.json").draft_backend(), nullptr);
}

TEST(ManifestDraft, RefusesAnUnknownRoleNamingTheKeyAndTheValues) {
  for (const char* role : {R"("drafts")", "3", R"("")"}) {
    expect_refused(with(R"({"kind": "backend", "library": "test_backend", "role": )" +
                        std::string(role) + R"(, "model": "d.gguf"}, )" + kSpec),
                   "plugins[3].role",
                   {"must be \"target\" (the default", "or \"draft\"", std::string("got ") + role});
  }
}

TEST(ManifestDraft, RefusesARoleOnAnotherKind) {
  expect_refused(with(R"({"kind": "speculator", "library": "test_spec_probe", "role": "draft"})"),
                 "plugins[3].role", {"only a backend has a role", "a speculator has none"});
}

TEST(ManifestDraft, RefusesAModelOnTheTargetBackend) {
  expect_refused(R"({"plugins": [
    {"kind": "backend", "library": "test_backend", "model": "m.gguf"},
    {"kind": "kv_cache", "library": "test_kv"}, {"kind": "scheduler", "library": "test_scheduler"}]})",
                 "plugins[0].model",
                 {"only a draft backend (\"role\": \"draft\") has its own model",
                  "move the path there, or add \"role\": \"draft\""});
  expect_refused(with(R"({"kind": "backend", "library": "test_backend", "role": "target",
                          "model": "m.gguf"})"),
                 "plugins[3].model", {"only a draft backend"});
}

TEST(ManifestDraft, RefusesAModelOnAnotherKind) {
  expect_refused(with(R"({"kind": "speculator", "library": "test_spec_probe", "model": "m.gguf"})"),
                 "plugins[3].model", {"only a draft backend", "remove it"});
}

TEST(ManifestDraft, RefusesADraftWithoutAModel) {
  expect_refused(
      with(R"({"kind": "backend", "library": "test_backend", "role": "draft"}, )" + kSpec),
      "plugins[3].model", {"required on a draft backend", "GGUF file"});
  expect_refused(
      with(R"({"kind": "backend", "library": "test_backend", "role": "draft", "model": ""}, )" +
           kSpec),
      "plugins[3].model", {"must be a non-empty string", "got \"\""});
  expect_refused(
      with(R"({"kind": "backend", "library": "test_backend", "role": "draft", "model": 7}, )" +
           kSpec),
      "plugins[3].model", {"must be a non-empty string", "got 7"});
}

TEST(ManifestDraft, RefusesASecondDraft) {
  expect_refused(with(kDraft + R"(, {"kind": "backend", "library": "test_backend", "role": "draft",
                          "name": "d2", "model": "d2.gguf"}, )" +
                      kSpec),
                 "plugins[4].role",
                 {"a second draft backend (\"test_backend\"; the first is plugins[3], "
                  "\"test_backend\")",
                  "at most one draft backend, remove one"});
}

TEST(ManifestDraft, RefusesASecondTarget) {
  expect_refused(with(R"({"kind": "backend", "library": "test_backend", "name": "b2"})"),
                 "plugins[3].kind",
                 {"a second backend (\"test_backend\"; the first is plugins[0]",
                  "at most one backend (and one draft backend, \"role\": \"draft\"), remove one"});
  expect_refused(with(R"({"kind": "backend", "library": "test_backend", "name": "b2",
                          "role": "target"})"),
                 "plugins[3].kind", {"a second backend"});
}

TEST(ManifestDraft, RefusesADraftWithoutATarget) {
  expect_refused(R"({"plugins": [
    {"kind": "backend", "library": "test_backend", "role": "draft", "model": "d.gguf"},
    {"kind": "kv_cache", "library": "test_kv"}, {"kind": "scheduler", "library": "test_scheduler"},
    {"kind": "speculator", "library": "test_spec_probe"}]})",
                 "plugins",
                 {"no target backend: plugins[0] is the draft backend",
                  "add the backend of the served model"});
}

TEST(ManifestDraft, RefusesADraftWithoutASpeculator) {
  expect_refused(with(kDraft), "plugins[3]",
                 {"a draft backend is only used by a speculator: add one (e.g. spec_decode with "
                  "method draft",
                  "or remove plugins[3]"});
}

TEST(ManifestDraft, AnUnknownKeyListsRoleAndModel) {
  expect_refused(with(R"({"kind": "backend", "library": "test_backend", "rol": "draft"})"),
                 "plugins[3].rol",
                 {"unknown key; allowed here: kind, library, name, config, role, model"});
}

}  // namespace
