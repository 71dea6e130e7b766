// The loader and the Pipeline: every refusal of loading (docs/architecture.md, 'Loading') names the
// library and the fix; an older-minor plugin loads; instances are created in the ABI's order with
// its wiring and destroyed in reverse; plugins log through the host API; a draft backend is created
// after the target over its own model, handed to the speculator, and refused with another
// vocabulary.
#include <gtest/gtest.h>

#include <spdlog/sinks/ostream_sink.h>

#include <fstream>
#include <sstream>

#include "runtime/call.hpp"
#include "runtime/manifest.hpp"
#include "runtime/pipeline.hpp"
#include "runtime/plugin_library.hpp"
#include "spec_probe.h"
#include "tiny_gguf.hpp"

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

// --- the draft backend ---------------------------------------------------------------------------

// A target and a draft model (tiny GGUF files) and a manifest that uses them, in a scratch folder.
struct DraftSetup {
  plinth_test::ScratchDir dir{"plinth_draft"};
  plinth_test::TinyGguf target_spec, draft_spec;
  std::filesystem::path target_path, draft_path;

  DraftSetup() { draft_spec.layers = 1; }
  void write() {
    target_path = target_spec.write(dir.path() / "target.gguf");
    draft_path = draft_spec.write(dir.path() / "draft.gguf");
  }
  // backend, draft backend (plugins[1]), kv_cache, scheduler and `speculator`.
  Manifest manifest(const std::string& speculator = "test_spec_probe") const {
    setenv("PLINTH_PLUGIN_PATH", kDir.c_str(), 1);
    return parse_manifest(R"({"model": "target.gguf", "plugins": [
      {"kind": "backend", "library": "test_backend"},
      {"kind": "backend", "library": "test_backend", "role": "draft", "model": "draft.gguf"},
      {"kind": "kv_cache", "library": "test_kv", "config": {"num_blocks": 10}},
      {"kind": "scheduler", "library": "test_scheduler"},
      {"kind": "speculator", "library": ")" +
                              speculator + R"("}]})",
                          dir.path() / "m.json");
  }
};

const plinth_test_spec_probe& probe_of(const Pipeline& p) {
  SpeculatorRef s = p.speculator();
  const void* ext = s.vtable->lifecycle.get_extension(s.instance, PLINTH_TEST_EXT_SPEC_PROBE);
  if (ext == nullptr) throw std::runtime_error("test_spec_probe offers no probe extension");
  return *static_cast<const plinth_test_spec_probe*>(ext);
}

TEST(PipelineDraft, CreatesTheDraftAfterTheTargetAndWiresItIntoTheSpeculator) {
  DraftSetup s;
  s.write();
  LoadedModel target = load_model(s.target_path);
  Captured c;
  {
    auto p = Pipeline::create(s.manifest(), target, c.host);
    ASSERT_TRUE(p->backend());
    ASSERT_TRUE(p->draft_backend());
    EXPECT_NE(p->draft_backend().instance, p->backend().instance);
    EXPECT_EQ(p->plugin(PLINTH_KIND_BACKEND)->entry.name, "test_backend");
    ASSERT_NE(p->draft_plugin(), nullptr);
    EXPECT_EQ(p->draft_plugin()->entry.name, "test_backend_draft");
    ASSERT_NE(p->draft_model(), nullptr);
    EXPECT_EQ(p->draft_model()->file->path(), s.draft_path.string());
    EXPECT_EQ(p->draft_model()->config.n_layers, 1u);

    const plinth_test_spec_probe& r = probe_of(*p);
    EXPECT_EQ(r.args_struct_size, sizeof(plinth_create_args));
    EXPECT_EQ(r.model, target.desc->get());
    EXPECT_EQ(r.backend.instance, p->backend().instance);
    EXPECT_EQ(r.backend.vtable, p->backend().vtable);
    EXPECT_EQ(r.kv_cache.instance, p->kv_cache().instance);
    EXPECT_EQ(r.kv_cache.vtable, p->kv_cache().vtable);
    EXPECT_EQ(r.draft_backend.instance, p->draft_backend().instance);
    EXPECT_EQ(r.draft_backend.vtable, p->draft_backend().vtable);
    EXPECT_EQ(r.draft_model, p->draft_model()->desc->get());
    EXPECT_STREQ(r.draft_model->path, s.draft_path.c_str());
    // The draft backend runs the draft model: 1 layer (the target has 2).
    EXPECT_EQ(r.draft_layout_status, PLINTH_OK);
    EXPECT_EQ(r.draft_layout.n_layers, 1u);
    plinth_kv_layout tl{};
    tl.struct_size = sizeof(tl);
    call("target.get_kv_layout", [&](plinth_error* e) {
      return p->backend().vtable->get_kv_layout(p->backend().instance, &tl, e);
    });
    EXPECT_EQ(tl.n_layers, 2u);
    // The kv_cache is sized over the target backend (2 layers), not the draft.
    plinth_kv_info info{};
    call("kv.get_info", [&](plinth_error* e) {
      return p->kv_cache().vtable->get_info(p->kv_cache().instance, &info, e);
    });
    EXPECT_EQ(info.bytes_per_block, tl.bytes_per_token * info.block_size);

    std::string d = p->describe();
    EXPECT_NE(d.find("draft backend test_backend_draft (plugins[1], driven by the speculator): "
                     "test_backend 0.1.0"),
              std::string::npos)
        << d;
    EXPECT_NE(d.find("draft model " + s.draft_path.string()), std::string::npos) << d;
    EXPECT_LT(d.find("4. speculator"), d.find("draft backend test_backend_draft")) << d;
    EXPECT_LT(d.find("draft backend test_backend_draft"), d.find("5. backend")) << d;
  }
  std::string log = c.log.str();
  const char* order[] = {"[test_backend] create backend",
                         "[test_backend_draft] create backend",
                         "[test_kv] create kv_cache",
                         "[test_scheduler] create scheduler",
                         "[test_spec_probe] create speculator",
                         "[test_spec_probe] destroy speculator",
                         "[test_scheduler] destroy scheduler",
                         "[test_kv] destroy kv_cache",
                         "[test_backend_draft] destroy backend",
                         "[test_backend] destroy backend"};
  size_t at = 0;
  for (const char* line : order) {
    size_t next = log.find(line, at);
    ASSERT_NE(next, std::string::npos) << line << " in order in\n" << log;
    at = next;
  }
}

TEST(PipelineDraft, WithoutADraftTheSpeculatorGetsNone) {
  Captured c;
  plinth_model_desc model = fake_model();
  auto p = Pipeline::create(manifest(R"([{"kind": "backend", "library": "test_backend"},
      {"kind": "kv_cache", "library": "test_kv"}, {"kind": "scheduler", "library": "test_scheduler"},
      {"kind": "speculator", "library": "test_spec_probe"}])"),
                            &model, c.host);
  EXPECT_FALSE(p->draft_backend());
  EXPECT_EQ(p->draft_plugin(), nullptr);
  EXPECT_EQ(p->draft_model(), nullptr);
  const plinth_test_spec_probe& r = probe_of(*p);
  EXPECT_EQ(r.model, &model);
  EXPECT_EQ(r.backend.instance, p->backend().instance);
  EXPECT_EQ(r.kv_cache.instance, p->kv_cache().instance);  // ABI 1.2: also without a draft
  EXPECT_EQ(r.draft_backend.vtable, nullptr);
  EXPECT_EQ(r.draft_backend.instance, nullptr);
  EXPECT_EQ(r.draft_model, nullptr);
  EXPECT_EQ(p->describe().find("draft backend"), std::string::npos);
}

TEST(PipelineDraft, InstantiatingUpToTheBackendCreatesTheDraftToo) {
  DraftSetup s;
  s.write();
  LoadedModel target = load_model(s.target_path);
  Captured c;
  auto p = Pipeline::load(s.manifest(), c.host);
  EXPECT_FALSE(p->draft_backend());
  EXPECT_EQ(p->draft_model(), nullptr);
  p->instantiate(target, PLINTH_KIND_BACKEND);
  EXPECT_TRUE(p->draft_backend());
  EXPECT_FALSE(p->kv_cache());
}

// Pipeline::create over `target` (a LoadedModel, or only its descriptor) must throw a
// ManifestError at plugins[1].model with each of `parts`, and create no draft backend.
void expect_vocab_refused(DraftSetup& s, bool descriptor_only,
                          const std::vector<std::string>& parts) {
  s.write();
  LoadedModel target = load_model(s.target_path);
  Captured c;
  try {
    if (descriptor_only) {
      Pipeline::create(s.manifest(), target.desc->get(), c.host);
    } else {
      Pipeline::create(s.manifest(), target, c.host);
    }
    ADD_FAILURE() << "a draft model of another vocabulary was accepted";
  } catch (const ManifestError& e) {
    EXPECT_EQ(e.json_path(), "plugins[1].model") << e.what();
    EXPECT_EQ(e.file(), s.dir.path() / "m.json");
    for (const std::string& p : parts)
      EXPECT_NE(e.message().find(p), std::string::npos) << e.what();
    EXPECT_NE(e.message().find("use a draft model trained with the same tokenizer"),
              std::string::npos)
        << e.what();
  }
  EXPECT_EQ(c.log.str().find("[test_backend_draft] create"), std::string::npos) << c.log.str();
  EXPECT_NE(c.log.str().find("[test_backend] destroy backend"), std::string::npos);
}

TEST(PipelineDraft, RefusesADraftWithAnotherVocabSize) {
  DraftSetup s;
  s.draft_spec.tokens = plinth_test::TinyGguf::default_tokens(33);
  expect_vocab_refused(s, false,
                       {"the draft model " + (s.dir.path() / "draft.gguf").string(),
                        "and the target model " + (s.dir.path() / "target.gguf").string(),
                        "33 tokens in the draft, 32 in the target"});
}

TEST(PipelineDraft, RefusesADraftWhoseTokensDifferNamingTheFirstId) {
  DraftSetup s;
  s.draft_spec.tokens[5] = "x5";
  s.draft_spec.tokens[9] = "x9";
  expect_vocab_refused(s, false,
                       {"token id 5 is \"x5\" in the draft and \"t5\" in the target (the first id "
                        "that differs)"});
}

TEST(PipelineDraft, ComparesTokensAlsoWhenOnlyTheTargetDescriptorIsGiven) {
  DraftSetup s;
  s.draft_spec.tokens[31] = "last";
  expect_vocab_refused(s, true, {"token id 31 is \"last\" in the draft and \"t31\""});
}

TEST(PipelineDraft, RefusesATargetWhoseVocabularyCannotBeRead) {
  DraftSetup s;
  s.write();
  Captured c;
  plinth_model_desc model = fake_model();  // path "fake.gguf": no such file
  model.config.vocab_size = 32;
  try {
    Pipeline::create(s.manifest(), &model, c.host);
    FAIL();
  } catch (const ManifestError& e) {
    EXPECT_EQ(e.json_path(), "model");
    EXPECT_NE(e.message().find("cannot read the target model's vocabulary to compare it with the "
                               "draft model of plugins[1]"),
              std::string::npos)
        << e.what();
  }
}

TEST(PipelineDraft, RefusesAMissingOrUnusableDraftModelFile) {
  DraftSetup s;
  s.write();
  LoadedModel target = load_model(s.target_path);
  std::filesystem::remove(s.draft_path);
  Captured c;
  try {
    Pipeline::create(s.manifest(), target, c.host);
    FAIL();
  } catch (const ManifestError& e) {
    EXPECT_EQ(e.json_path(), "plugins[1].model");
    EXPECT_NE(e.message().find("no draft model file " + s.draft_path.string() + ": fix the path"),
              std::string::npos)
        << e.what();
  }
  { std::ofstream(s.draft_path) << "not a gguf file"; }
  try {
    Pipeline::create(s.manifest(), target, c.host);
    FAIL();
  } catch (const ManifestError& e) {
    EXPECT_EQ(e.json_path(), "plugins[1].model");
    EXPECT_NE(e.message().find("the draft model cannot be used: " + s.draft_path.string()),
              std::string::npos)
        << e.what();
  }
}

// abi_compat's test_speculator, built against the released 1.0 headers, never reads
// draft_backend: the pipeline refuses the pair before creating anything.
TEST(PipelineDraft, RefusesASpeculatorOlderThanAbi12) {
  DraftSetup s;
  s.write();
  Captured c;
  try {
    Pipeline::load(s.manifest(PLINTH_ABI10_PLUGIN_DIR "/libplinth_test_speculator.so"), c.host);
    FAIL();
  } catch (const ManifestError& e) {
    EXPECT_EQ(e.json_path(), "plugins[1]");
    EXPECT_NE(e.message().find("a draft backend needs a speculator that receives it (ABI >= 1.2), "
                               "but speculator \"test_speculator\" was built against ABI 1.0"),
              std::string::npos)
        << e.what();
  }
}

}  // namespace
