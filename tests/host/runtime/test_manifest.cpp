// Manifest parsing: paths, model resolution, library search order, names.
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

}  // namespace
