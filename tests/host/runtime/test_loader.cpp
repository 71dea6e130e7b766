// The loader and the Pipeline: every refusal of DESIGN §3 names the library and the fix; an
// older-minor plugin loads; instances are created in the ABI's order with its wiring and
// destroyed in reverse; plugins log through the host API.
#include <gtest/gtest.h>

#include <spdlog/sinks/ostream_sink.h>

#include <fstream>
#include <sstream>

#include "runtime/call.hpp"
#include "runtime/manifest.hpp"
#include "runtime/pipeline.hpp"
#include "runtime/plugin_library.hpp"

namespace {

using namespace plinth;
const std::string kDir = PLINTH_TEST_PLUGIN_DIR;

std::string lib(const std::string& name) {
  return kDir + "/libplinth_" + name + ".so";
}

// A model descriptor with SmolLM2-135M's shape and no tensors: enough for the test backend.
plinth_model_desc fake_model() {
  plinth_model_desc d{};
  d.struct_size = sizeof(d);
  d.config.struct_size = sizeof(d.config);
  d.config.architecture = "llama";
  d.config.n_layers = 30;
  d.config.hidden_size = 576;
  d.config.n_heads = 9;
  d.config.n_kv_heads = 3;
  d.config.head_dim = 64;
  d.config.vocab_size = 49152;
  d.path = "fake.gguf";
  return d;
}

// Manifest text with the given plugins (kind, library, config) resolved from the test folder.
Manifest manifest(const std::string& plugins_json) {
  setenv("PLINTH_PLUGIN_PATH", kDir.c_str(), 1);
  return parse_manifest(R"({"plugins": )" + plugins_json + "}", "/tmp/plinth_test/m.json");
}

const char* kGood = R"([
  {"kind": "backend", "library": "test_backend"},
  {"kind": "kv_cache", "library": "test_kv", "config": {"block_size": 32, "num_blocks": 100}},
  {"kind": "scheduler", "library": "test_scheduler"}])";

struct Captured {
  std::ostringstream log;
  HostContext host;
  Captured() : host(make()) {}
  std::shared_ptr<spdlog::logger> make() {
    auto l = std::make_shared<spdlog::logger>(
        "test", std::make_shared<spdlog::sinks::ostream_sink_st>(log));
    l->set_pattern("%v");
    l->set_level(spdlog::level::debug);
    return l;
  }
};

void expect_refused(const std::string& name, const std::vector<std::string>& parts) {
  try {
    PluginLibrary::open(lib(name));
    FAIL() << name << " loaded";
  } catch (const PluginError& e) {
    std::string what = e.what();
    EXPECT_EQ(e.library(), lib(name));
    EXPECT_NE(what.find(lib(name)), std::string::npos) << what;
    for (const std::string& p : parts) EXPECT_NE(what.find(p), std::string::npos) << what;
  }
}

TEST(AbiCompatible, SameMajorAndMinorNotNewer) {
  EXPECT_TRUE(abi_compatible(1, 3, 1, 2));
  EXPECT_TRUE(abi_compatible(1, 3, 1, 3));
  EXPECT_TRUE(abi_compatible(1, 3, 1, 0));
  EXPECT_FALSE(abi_compatible(1, 3, 1, 4));
  EXPECT_FALSE(abi_compatible(1, 3, 2, 0));
  EXPECT_FALSE(abi_compatible(2, 0, 1, 0));
}

TEST(Loader, RefusesLibraryWithoutEntrySymbol) {
  expect_refused("bad_no_entry", {"has no symbol plinth_plugin_entry", "PLINTH_PLUGIN(...)"});
}

const std::string kHostAbi =
    std::to_string(PLINTH_ABI_MAJOR) + "." + std::to_string(PLINTH_ABI_MINOR);

TEST(Loader, RefusesAnotherAbiMajor) {
  expect_refused("bad_abi_major2",
                 {"built against plinth ABI 2.0", "this host speaks ABI " + kHostAbi,
                  "rebuild it against this host's SDK"});
}

// bad_abi_newer_minor declares PLINTH_ABI_MINOR + 1 of the headers it was built with (this tree's).
TEST(Loader, RefusesANewerMinorNamingBothVersions) {
  expect_refused(
      "bad_abi_newer_minor",
      {"built against plinth ABI " + std::to_string(PLINTH_ABI_MAJOR) + "." +
           std::to_string(PLINTH_ABI_MINOR + 1) + ", but this host speaks ABI " + kHostAbi,
       "newer than the host's; upgrade plinth or rebuild"});
}

TEST(Loader, RefusesAFileThatIsNoSharedLibrary) {
  auto p = std::filesystem::temp_directory_path() / "libplinth_not_elf.so";
  { std::ofstream(p) << "not a library"; }
  try {
    PluginLibrary::open(p);
    FAIL();
  } catch (const PluginError& e) {
    EXPECT_NE(std::string(e.what()).find("cannot be loaded"), std::string::npos) << e.what();
  }
  std::filesystem::remove(p);
}

TEST(Loader, LoadsAnOlderOrEqualMinor) {
  auto l = PluginLibrary::open(lib("test_abi_older_minor"));
  EXPECT_EQ(l->descriptor().abi_major, PLINTH_ABI_MAJOR);
  EXPECT_EQ(l->descriptor().abi_minor, 0);
  EXPECT_LE(l->descriptor().abi_minor, PLINTH_ABI_MINOR);
  EXPECT_EQ(l->kind(), PLINTH_KIND_SCHEDULER);
  // ... and runs in a pipeline.
  Captured c;
  plinth_model_desc model = fake_model();
  auto p = Pipeline::create(manifest(R"([
    {"kind": "backend", "library": "test_backend"}, {"kind": "kv_cache", "library": "test_kv"},
    {"kind": "scheduler", "library": "test_abi_older_minor"}])"),
                            &model, c.host);
  EXPECT_TRUE(p->scheduler());
}

TEST(Pipeline, CreatesInAbiOrderWiresAndDestroysInReverse) {
  Captured c;
  plinth_model_desc model = fake_model();
  {
    auto p = Pipeline::create(manifest(kGood), &model, c.host);
    ASSERT_TRUE(p->backend());
    ASSERT_TRUE(p->kv_cache());
    ASSERT_TRUE(p->scheduler());
    EXPECT_FALSE(p->prefix_cache());
    EXPECT_FALSE(p->speculator());
    EXPECT_FALSE(p->graph_runner());
    plinth_kv_info info{};
    call(p->function_name(PLINTH_KIND_KV_CACHE, "get_info"), [&](plinth_error* e) {
      return p->kv_cache().vtable->get_info(p->kv_cache().instance, &info, e);
    });
    EXPECT_EQ(info.block_size, 32u);
    EXPECT_EQ(info.num_blocks, 100u);
    EXPECT_EQ(info.bytes_per_block, 32u * 2 * 30 * 3 * 64 * 2);  // wired to the backend's layout
    EXPECT_EQ(p->function_name(PLINTH_KIND_KV_CACHE, "allocate"), "test_kv.allocate");
  }
  std::string log = c.log.str();
  const char* order[] = {"[test_backend] create backend",     "[test_kv] create kv_cache",
                         "[test_scheduler] create scheduler", "[test_scheduler] destroy scheduler",
                         "[test_kv] destroy kv_cache",        "[test_backend] destroy backend"};
  size_t at = 0;
  for (const char* line : order) {
    size_t next = log.find(line, at);
    ASSERT_NE(next, std::string::npos) << line << " in order in\n" << log;
    at = next;
  }
}

TEST(Pipeline, CallHelperNamesPluginAndFunction) {
  Captured c;
  plinth_model_desc model = fake_model();
  auto p = Pipeline::create(manifest(kGood), &model, c.host);
  KvCacheRef kv = p->kv_cache();
  try {
    call(p->function_name(PLINTH_KIND_KV_CACHE, "truncate"),
         [&](plinth_error* e) { return kv.vtable->truncate(kv.instance, 1, 0, e); });
    FAIL();
  } catch (const PluginCallError& e) {
    EXPECT_EQ(e.status(), PLINTH_ERR_UNSUPPORTED);
    EXPECT_EQ(std::string(e.what()),
              "test_kv.truncate failed: UNSUPPORTED: test plugin: truncate is not modelled");
  }
}

void expect_create_refused(const std::string& kv_library, const std::vector<std::string>& parts) {
  Captured c;
  plinth_model_desc model = fake_model();
  try {
    Pipeline::create(manifest(R"([{"kind": "backend", "library": "test_backend"},
      {"kind": "kv_cache", "library": ")" +
                              kv_library + R"("},
      {"kind": "scheduler", "library": "test_scheduler"}])"),
                     &model, c.host);
    FAIL() << kv_library << " created";
  } catch (const PluginError& e) {
    std::string what = e.what();
    EXPECT_NE(what.find(lib(kv_library)), std::string::npos) << what;
    EXPECT_NE(what.find("plugins[1]"), std::string::npos) << what;
    for (const std::string& p : parts) EXPECT_NE(what.find(p), std::string::npos) << what;
  }
  // The backend created before the failure was destroyed with the pipeline.
  EXPECT_NE(c.log.str().find("destroy backend"), std::string::npos);
}

TEST(Pipeline, RefusesAPluginWhoseCreateFails) {
  expect_create_refused("bad_create_fails",
                        {"failed to create: INVALID_ARGUMENT: bad_create_fails: this cache needs "
                         "block_size 32",
                         "fix its config at /tmp/plinth_test/m.json: plugins[1].config"});
}

TEST(Pipeline, RefusesAPluginWhoseCreateThrowsThroughTheSdkGuard) {
  expect_create_refused("bad_create_throws",
                        {"failed to create: INTERNAL: bad_create_throws: something broke inside",
                         "a bug in the plugin: report it to its author"});
}

TEST(Pipeline, RefusesARawPluginWhoseCreateThrows) {
  expect_create_refused("bad_create_throws_raw",
                        {"create let a C++ exception cross the C ABI", "plinth::sdk::guard"});
}

TEST(Pipeline, RefusesACPluginFailingWithoutAMessage) {
  expect_create_refused("bad_create_raw_error", {"failed to create: INTERNAL: (no message)"});
}

TEST(Pipeline, RefusesAGraphRunnerWithoutTheCudaExtension) {
  Captured c;
  plinth_model_desc model = fake_model();
  std::string plugins = R"([{"kind": "backend", "library": "test_backend"},
      {"kind": "kv_cache", "library": "test_kv"}, {"kind": "scheduler", "library": "test_scheduler"},
      {"kind": "graph_runner", "library": "test_graph_runner"}])";
  try {
    Pipeline::create(manifest(plugins), &model, c.host);
    FAIL();
  } catch (const PluginError& e) {
    std::string what = e.what();
    EXPECT_NE(what.find(lib("test_graph_runner")), std::string::npos) << what;
    EXPECT_NE(what.find("needs a backend offering the CUDA extension \"plinth.cuda_stream/1\", and "
                        "backend \"test_backend\" does not: use a CUDA backend"),
              std::string::npos)
        << what;
  }
  // With the extension offered, it is created.
  std::string with_ext = plugins;
  with_ext.replace(with_ext.find(R"("test_backend"})"), 15,
                   R"("test_backend", "config": {"cuda_extension": true}})");
  auto p = Pipeline::create(manifest(with_ext), &model, c.host);
  EXPECT_TRUE(p->graph_runner());
}

TEST(Pipeline, ValidatesConfigAgainstThePluginSchemaBeforeCreate) {
  Captured c;
  try {
    Pipeline::load(manifest(R"([{"kind": "backend", "library": "test_backend"},
      {"kind": "kv_cache", "library": "test_kv", "config": {"block_size": 3}},
      {"kind": "scheduler", "library": "test_scheduler"}])"),
                   c.host);
    FAIL();
  } catch (const ManifestError& e) {
    EXPECT_EQ(e.json_path(), "plugins[1].config.block_size");
    EXPECT_EQ(e.message(), "must be a power of two between 1 and 256, got 3");
  }
  EXPECT_EQ(c.log.str().find("create kv_cache"), std::string::npos);
}

TEST(Pipeline, InstantiateStopsAfterTheGivenKind) {
  Captured c;
  plinth_model_desc model = fake_model();
  auto p = Pipeline::load(manifest(kGood), c.host);
  EXPECT_FALSE(p->backend());
  p->instantiate(&model, PLINTH_KIND_KV_CACHE);
  EXPECT_TRUE(p->backend());
  EXPECT_TRUE(p->kv_cache());
  EXPECT_FALSE(p->scheduler());
  std::string d = p->describe();
  EXPECT_LT(d.find("test_scheduler"), d.find("test_kv"));
  EXPECT_LT(d.find("test_kv"), d.find("test_backend"));
}

TEST(Pipeline, BackendWithoutModelIsRefused) {
  Captured c;
  try {
    Pipeline::create(manifest(kGood), nullptr, c.host);
    FAIL();
  } catch (const PluginError& e) {
    EXPECT_NE(std::string(e.what()).find("needs a model"), std::string::npos);
  }
}

}  // namespace
