// ABI 1.0 compatibility without the model: plugins of every kind built against the released 1.0
// headers (tests/plugins/abi_compat/CMakeLists.txt) load in this host, report ABI 1.0 and 1.0's
// table sizes, and behave as their builds with the current SDK do; the real 1.0 prefix cache works
// over the current kv_paged through the 1.0 entries of its table; and the table-size rule of each
// declared minor (abi_versions.h) is enforced both ways.
#include <gtest/gtest.h>

#include <spdlog/sinks/ostream_sink.h>

#include <filesystem>
#include <sstream>
#include <string>
#include <vector>

#include "runtime/call.hpp"
#include "runtime/manifest.hpp"
#include "runtime/pipeline.hpp"
#include "runtime/plugin_library.hpp"

namespace {

using namespace plinth;
namespace fs = std::filesystem;

static_assert(PLINTH_ABI_MAJOR == 1 && PLINTH_ABI_MINOR >= 1,
              "these tests load ABI 1.0 plugins into a host of a newer minor");

const std::string kAbi10Dir = PLINTH_ABI10_PLUGIN_DIR;
const std::string kTestDir = PLINTH_TEST_PLUGIN_DIR;
const std::string kPluginDir = PLINTH_PLUGIN_DIR;

std::string in(const std::string& dir, const std::string& name) {
  return dir + "/libplinth_" + name + ".so";
}
std::string abi10(const std::string& name) {
  return in(kAbi10Dir, name);
}

struct Abi10Plugin {
  const char* name;
  plinth_plugin_kind kind;
  uint32_t table_size;  // the kind's table in ABI 1.0
};
const Abi10Plugin kAbi10Plugins[] = {
    {"backend_cpu", PLINTH_KIND_BACKEND, PLINTH_ABI_1_0_SIZEOF_BACKEND_VTABLE},
    {"kv_paged", PLINTH_KIND_KV_CACHE, PLINTH_ABI_1_0_SIZEOF_KV_CACHE_VTABLE},
    {"scheduler_fcfs", PLINTH_KIND_SCHEDULER, PLINTH_ABI_1_0_SIZEOF_SCHEDULER_VTABLE},
    {"prefix_exact", PLINTH_KIND_PREFIX_CACHE, PLINTH_ABI_1_0_SIZEOF_PREFIX_CACHE_VTABLE},
    {"test_speculator", PLINTH_KIND_SPECULATOR, PLINTH_ABI_1_0_SIZEOF_SPECULATOR_VTABLE},
    {"test_graph_runner", PLINTH_KIND_GRAPH_RUNNER, PLINTH_ABI_1_0_SIZEOF_GRAPH_RUNNER_VTABLE},
};

// A model descriptor with SmolLM2-135M's shape and no tensors: enough for test_backend.
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

// A manifest of the given plugins (libraries named by path or resolved from test_plugins).
Manifest manifest(const std::string& plugins_json) {
  setenv("PLINTH_PLUGIN_PATH", kTestDir.c_str(), 1);
  return parse_manifest(R"({"plugins": )" + plugins_json + "}", "/tmp/plinth_abi_compat/m.json");
}

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

// The message of the PluginError that `f` throws, with `path` replaced by "<lib>", or "(loaded)".
template <class F>
std::string refusal(F&& f, const std::string& path) {
  try {
    f();
  } catch (const PluginError& e) {
    std::string what = e.what();
    for (size_t at; (at = what.find(path)) != std::string::npos;)
      what.replace(at, path.size(), "<lib>");
    return what;
  }
  return "(loaded)";
}

TEST(Abi10Plugins, EveryKindLoadsAndReportsAbi10WithItsTableSize) {
  for (const Abi10Plugin& p : kAbi10Plugins) {
    SCOPED_TRACE(p.name);
    std::shared_ptr<PluginLibrary> lib;
    ASSERT_NO_THROW(lib = PluginLibrary::open(abi10(p.name)));
    const plinth_plugin_descriptor& d = lib->descriptor();
    EXPECT_EQ(d.abi_major, 1);
    EXPECT_EQ(d.abi_minor, 0);
    EXPECT_EQ(d.struct_size, PLINTH_ABI_1_0_SIZEOF_PLUGIN_DESCRIPTOR);
    EXPECT_EQ(lib->name(), p.name);
    EXPECT_EQ(lib->kind(), p.kind);
    EXPECT_EQ(lib->head().struct_size, p.table_size);
    EXPECT_EQ(lib->head().lifecycle.struct_size, PLINTH_ABI_1_0_SIZEOF_LIFECYCLE);
    EXPECT_NE(lib->describe().find("ABI 1.0, " + abi10(p.name)), std::string::npos)
        << lib->describe();
  }
}

TEST(Abi10Plugins, OlderMinorSchedulerIsReallyBuiltAgainst10) {
  auto lib = PluginLibrary::open(in(kTestDir, "test_abi_older_minor"));
  EXPECT_EQ(lib->descriptor().abi_major, 1);
  EXPECT_EQ(lib->descriptor().abi_minor, 0);
  EXPECT_EQ(lib->head().struct_size, PLINTH_ABI_1_0_SIZEOF_SCHEDULER_VTABLE);
}

TEST(Abi10Plugins, The10PrefixCacheTableHasNo11Entries) {
  auto lib = PluginLibrary::open(abi10("prefix_exact"));
  const auto* t = static_cast<const plinth_prefix_cache_vtable*>(lib->descriptor().vtable);
  EXPECT_LT(t->struct_size, sizeof(plinth_prefix_cache_vtable));
  EXPECT_TRUE(PLINTH_HAS_FIELD(t, plinth_prefix_cache_vtable, get_stats));
  EXPECT_FALSE(PLINTH_HAS_FIELD(t, plinth_prefix_cache_vtable, match_key));
  EXPECT_FALSE(PLINTH_HAS_FIELD(t, plinth_prefix_cache_vtable, insert_key));
}

// The 1.0 prefix cache over the current kv_paged, driven through its 1.0 entries as a scheduler
// does: insert a sequence's blocks, match them (locked), evict only after release.
TEST(Abi10Plugins, PrefixCacheMatchesInsertsAndEvictsOverTheCurrentKvPaged) {
  Captured c;
  plinth_model_desc model = fake_model();
  auto p = Pipeline::create(manifest(R"([
    {"kind": "backend", "library": "test_backend"},
    {"kind": "kv_cache", "library": ")" +
                                     in(kPluginDir, "kv_paged") +
                                     R"(", "config": {"block_size": 16, "num_blocks": 64}},
    {"kind": "prefix_cache", "library": ")" +
                                     abi10("prefix_exact") + R"("},
    {"kind": "scheduler", "library": "test_scheduler"}])"),
                            &model, c.host);
  ASSERT_TRUE(p->prefix_cache());
  EXPECT_EQ(p->plugin(PLINTH_KIND_PREFIX_CACHE)->library->descriptor().abi_minor, 0);
  EXPECT_EQ(p->plugin(PLINTH_KIND_KV_CACHE)->library->descriptor().abi_minor, PLINTH_ABI_MINOR);
  KvCacheRef kv = p->kv_cache();
  PrefixCacheRef pc = p->prefix_cache();
  auto used_blocks = [&] {
    plinth_kv_stats s{};
    call("kv_paged.get_stats",
         [&](plinth_error* e) { return kv.vtable->get_stats(kv.instance, &s, e); });
    return s.num_used_blocks;
  };

  std::vector<int32_t> tokens(40);
  for (size_t i = 0; i < tokens.size(); ++i) tokens[i] = static_cast<int32_t>(100 + i);
  uint32_t num_copies = 0;
  plinth_block_copy copy{};
  call("kv_paged.allocate", [&](plinth_error* e) {
    return kv.vtable->allocate(kv.instance, 1, 40, &copy, 1, &num_copies, e);
  });
  const int32_t* table = nullptr;
  uint32_t num_blocks = 0;
  call("kv_paged.get_block_table", [&](plinth_error* e) {
    return kv.vtable->get_block_table(kv.instance, 1, &table, &num_blocks, e);
  });
  ASSERT_EQ(num_blocks, 3u);
  const std::vector<int32_t> blocks(table, table + num_blocks);
  call("prefix_exact.insert", [&](plinth_error* e) {
    return pc.vtable->insert(pc.instance, tokens.data(), 40, blocks.data(), 3, e);
  });
  kv.vtable->free_seq(kv.instance, 1);
  EXPECT_EQ(used_blocks(), 2u) << "the cache keeps its two full blocks";

  plinth_prefix_match m{};
  call("prefix_exact.match",
       [&](plinth_error* e) { return pc.vtable->match(pc.instance, tokens.data(), 40, &m, e); });
  EXPECT_EQ(m.struct_size, PLINTH_ABI_1_0_SIZEOF_PREFIX_MATCH);
  ASSERT_EQ(m.num_blocks, 2u);
  EXPECT_EQ(m.num_tokens, 32u);
  EXPECT_EQ(std::vector<int32_t>(m.blocks, m.blocks + 2),
            std::vector<int32_t>(blocks.begin(), blocks.begin() + 2));
  EXPECT_NE(m.handle, 0u);
  std::vector<int32_t> other = tokens;
  other[3] = 7;
  plinth_prefix_match miss{};
  call("prefix_exact.match",
       [&](plinth_error* e) { return pc.vtable->match(pc.instance, other.data(), 40, &miss, e); });
  EXPECT_EQ(miss.num_blocks, 0u);
  EXPECT_EQ(miss.handle, 0u);

  uint32_t evicted = 99;
  call("prefix_exact.evict",
       [&](plinth_error* e) { return pc.vtable->evict(pc.instance, 10, &evicted, e); });
  EXPECT_EQ(evicted, 0u) << "a matched prefix is locked";
  pc.vtable->release(pc.instance, m.handle);

  // The 1.0 plugin writes 1.0's stats: the fields 1.1 added stay as the caller left them.
  plinth_prefix_stats s{};
  s.num_evicted_blocks = 12345;
  call("prefix_exact.get_stats",
       [&](plinth_error* e) { return pc.vtable->get_stats(pc.instance, &s, e); });
  EXPECT_EQ(s.struct_size, PLINTH_ABI_1_0_SIZEOF_PREFIX_STATS);
  const plinth_prefix_stats* written = &s;
  EXPECT_TRUE(PLINTH_HAS_FIELD(written, plinth_prefix_stats, num_evictable_blocks));
  EXPECT_FALSE(PLINTH_HAS_FIELD(written, plinth_prefix_stats, num_evicted_blocks));
  EXPECT_EQ(s.num_evicted_blocks, 12345u);
  EXPECT_EQ(s.num_queried_tokens, 80u);
  EXPECT_EQ(s.num_hit_tokens, 32u);
  EXPECT_EQ(s.num_cached_blocks, 2u);
  EXPECT_EQ(s.num_evictable_blocks, 2u);

  call("prefix_exact.evict",
       [&](plinth_error* e) { return pc.vtable->evict(pc.instance, 10, &evicted, e); });
  EXPECT_EQ(evicted, 2u);
  EXPECT_EQ(used_blocks(), 0u);

  // Its calls are counted in the host's metrics, through the 1.0 host API.
  MetricsRegistry& metrics = c.host.metrics();
  EXPECT_EQ(metrics.value(metrics.register_metric("plinth_prefix_exact_match_calls_total", "",
                                                  PLINTH_METRIC_COUNTER)),
            2.0);
  EXPECT_EQ(metrics.value(metrics.register_metric("plinth_prefix_exact_insert_calls_total", "",
                                                  PLINTH_METRIC_COUNTER)),
            1.0);
}

// One source, two builds (test_plugins: the current SDK; abi_1_0_plugins: ABI 1.0): the host
// creates, wires and calls both alike.
TEST(Abi10Plugins, SpeculatorBehavesAsIts11Build) {
  struct Outcome {
    std::vector<uint32_t> num_draft;
    std::vector<int32_t> draft;
    uint32_t accepted = 0;
    int32_t next = -1;
    uint64_t stats_draft = 0, stats_accepted = 0;
    bool operator==(const Outcome&) const = default;
  };
  std::vector<Outcome> outcomes;
  for (const std::string& file : {in(kTestDir, "test_speculator"), abi10("test_speculator")}) {
    SCOPED_TRACE(file);
    Captured c;
    plinth_model_desc model = fake_model();
    auto p = Pipeline::create(manifest(R"([{"kind": "backend", "library": "test_backend"},
      {"kind": "kv_cache", "library": "test_kv"}, {"kind": "scheduler", "library": "test_scheduler"},
      {"kind": "speculator", "library": ")" +
                                       file + R"("}])"),
                              &model, c.host);
    SpeculatorRef sp = p->speculator();
    ASSERT_TRUE(sp);
    EXPECT_NE(c.log.str().find("[test_speculator] create speculator"), std::string::npos);
    const int32_t history[] = {5, 6, 7};
    plinth_spec_seq seq{1, history, 3};
    plinth_spec_proposal prop{};
    call("test_speculator.propose",
         [&](plinth_error* e) { return sp.vtable->propose(sp.instance, &seq, 1, 4, &prop, e); });
    Outcome o;
    o.num_draft.assign(prop.num_draft, prop.num_draft + prop.num_seqs);
    o.draft.assign(prop.draft_tokens, prop.draft_tokens + prop.num_seqs * prop.max_draft);
    const int32_t target[] = {7, 9};
    plinth_spec_verify v{1, 1, prop.draft_tokens, target, nullptr, nullptr, 49152, nullptr};
    call("test_speculator.verify", [&](plinth_error* e) {
      return sp.vtable->verify(sp.instance, &v, 1, &o.accepted, &o.next, e);
    });
    plinth_spec_stats st{};
    st.struct_size = PLINTH_ABI_1_0_SIZEOF_SPEC_STATS;  // a caller that knows the 1.0 fields
    call("test_speculator.get_stats",
         [&](plinth_error* e) { return sp.vtable->get_stats(sp.instance, &st, e); });
    EXPECT_EQ(st.struct_size, PLINTH_ABI_1_0_SIZEOF_SPEC_STATS);
    o.stats_draft = st.num_draft_tokens;
    o.stats_accepted = st.num_accepted_tokens;
    outcomes.push_back(o);
  }
  ASSERT_EQ(outcomes.size(), 2u);
  EXPECT_EQ(outcomes[0].num_draft, std::vector<uint32_t>{1});
  EXPECT_EQ(outcomes[0].draft, std::vector<int32_t>{7});
  EXPECT_EQ(outcomes[0].accepted, 1u);
  EXPECT_EQ(outcomes[0].next, 9);
  EXPECT_TRUE(outcomes[0] == outcomes[1]) << "the ABI 1.0 build answered differently";
}

TEST(Abi10Plugins, GraphRunnerIsRefusedAndAcceptedAsIts11Build) {
  const std::string plugins = R"([{"kind": "backend", "library": "test_backend"},
      {"kind": "kv_cache", "library": "test_kv"}, {"kind": "scheduler", "library": "test_scheduler"},
      {"kind": "graph_runner", "library": "<lib>"}])";
  auto with = [&](const std::string& file, bool cuda) {
    std::string m = plugins;
    m.replace(m.find("<lib>"), 5, file);
    if (cuda) {
      m.replace(m.find(R"("test_backend"})"), 15,
                R"("test_backend", "config": {"cuda_extension": true}})");
    }
    return manifest(m);
  };
  std::vector<std::string> refusals;
  for (const std::string& file : {in(kTestDir, "test_graph_runner"), abi10("test_graph_runner")}) {
    SCOPED_TRACE(file);
    Captured c;
    plinth_model_desc model = fake_model();
    refusals.push_back(refusal([&] { Pipeline::create(with(file, false), &model, c.host); }, file));
    EXPECT_NE(refusals.back().find("needs a backend offering the CUDA extension"),
              std::string::npos)
        << refusals.back();
    std::unique_ptr<Pipeline> p;
    EXPECT_NO_THROW(p = Pipeline::create(with(file, true), &model, c.host));
    EXPECT_TRUE(p && p->graph_runner());
  }
  ASSERT_EQ(refusals.size(), 2u);
  EXPECT_EQ(refusals[0], refusals[1]);
}

// abi_versions.h: a plugin of minor m must fill at least minor m's table. The prefix_cache table
// grew in 1.1 (match_key, insert_key); a table of 1.0's size only loads as a 1.0 plugin.
TEST(AbiTableSize, Minor1WithA10SizedTableIsRefused) {
  const std::string file = in(kTestDir, "bad_prefix_table_1_0_minor1");
  try {
    PluginLibrary::open(file);
    FAIL() << file << " loaded";
  } catch (const PluginError& e) {
    const std::string what = e.what();
    EXPECT_EQ(e.library(), file);
    for (const std::string& part :
         {file, std::string("(bad_prefix_table_1_0_minor1)"),
          std::string("its prefix_cache table has struct_size ") +
              std::to_string(PLINTH_ABI_1_0_SIZEOF_PREFIX_CACHE_VTABLE),
          std::string("but ABI 1.1 (as the plugin declares) needs at least ") +
              std::to_string(PLINTH_ABI_1_1_SIZEOF_PREFIX_CACHE_VTABLE) + " bytes",
          std::string("plinth::sdk::prefix_cache_vtable<T>()"),
          std::string("rebuild it against this host's SDK (plinth ABI 1.") +
              std::to_string(PLINTH_ABI_MINOR) + ")"}) {
      EXPECT_NE(what.find(part), std::string::npos) << "no \"" << part << "\" in: " << what;
    }
  }
}

TEST(AbiTableSize, Minor0WithA10SizedTableLoads) {
  auto lib = PluginLibrary::open(in(kTestDir, "test_prefix_table_1_0_minor0"));
  EXPECT_EQ(lib->descriptor().abi_minor, 0);
  EXPECT_EQ(lib->kind(), PLINTH_KIND_PREFIX_CACHE);
  EXPECT_EQ(lib->head().struct_size, PLINTH_ABI_1_0_SIZEOF_PREFIX_CACHE_VTABLE);
}

}  // namespace
