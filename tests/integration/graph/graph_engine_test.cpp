// The engine's graph-runner path on the real model (SmolLM2-135M, backend_cpu's default path) at
// temperature 0, without a GPU: EngineHost loads a manifest whose backend is backend_cpu offering
// plinth.cuda_stream/1 on the host (host_cuda_backend.cpp) and whose graph_runner is cuda_graph's
// GraphRunner over a host-emulated stream (host_graph_runner.cpp). Decode batches of 1, 3, 13,
// 16, 30, 31 and 32 sequences are padded to 1, 4, 16, 16, 32, 32, 32 rows and replayed from the
// recorded "graphs"; the ids must equal the plain pipeline's (backend_cpu, no graph runner) token
// for token. Prefill and mixed prefill/decode steps, batches above the largest capture size and
// block tables wider than the captured one must run eagerly (counted by the backend), and still
// give the same ids.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "app/engine_host.hpp"
#include "runtime/host_context.hpp"
#include "runtime/logging.hpp"

namespace plinth {
namespace {

namespace fs = std::filesystem;

const fs::path kModel = fs::path(PLINTH_SOURCE_DIR) / "models/SmolLM2-135M-Instruct.Q4_1.gguf";
const fs::path kTestPlugins = fs::path(PLINTH_BUILD_DIR) / "test_plugins";

// Mirrors host_cuda_backend.cpp's GraphCounters.
struct GraphCounters {
  uint64_t eager_forwards, eager_decode_only, eager_mixed, prepare_calls;
  uint32_t max_seqs, width;
  uint64_t static_runs;
  uint64_t runs_by_rows[65];
  uint64_t dummy_rows;
};

const char* const kText =
    "The river rose slowly through the night, and by morning the low fields beyond the mill were "
    "a sheet of grey water. The miller walked the bank with a lantern long after it was needed, "
    "counting the fence posts that still showed above the flood. His daughter kept the accounts; "
    "she had written down every harvest for eleven years, and she knew that a wet spring meant "
    "a thin autumn. In the village the talk was of the bridge, which had stood for two hundred "
    "years and now shook whenever a cart crossed it. The council met in the school room and "
    "argued about stone and timber, about the cost of hiring engineers from the city.";

/// `graph_config` empty: the plain pipeline (backend_cpu, no graph runner). `budget`: the
/// scheduler's token budget per step (2048: a whole batch of prompts prefills in one step, then
/// every sequence decodes in step; 96: prefill chunks mix with decodes).
fs::path write_manifest(const std::string& name, const std::string& graph_config, uint32_t budget) {
  const fs::path dir = fs::temp_directory_path() / "plinth_graph_engine";
  fs::create_directories(dir);
  const fs::path file = dir / (name + ".json");
  const std::string backend = graph_config.empty()
                                  ? std::string("backend_cpu")
                                  : (kTestPlugins / "libplinth_host_cuda_backend.so").string();
  std::ofstream out(file);
  out << R"({"model": ")" << kModel.string() << R"(", "plugins": [
    {"kind": "backend", "library": ")"
      << backend << R"(", "config": {"threads": 2}},
    {"kind": "kv_cache", "library": "kv_paged", "config": {"block_size": 16, "num_blocks": 512}},
    {"kind": "scheduler", "library": "scheduler_continuous",
     "config": {"max_num_seqs": 64, "max_num_batched_tokens": )"
      << budget << "}}";
  if (!graph_config.empty()) {
    out << R"(,
    {"kind": "graph_runner", "library": ")"
        << (kTestPlugins / "libplinth_host_graph_runner.so").string() << R"(", "config": )"
        << graph_config << "}";
  }
  out << "]}";
  return file;
}

class GraphEngine : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!fs::exists(kModel))
      GTEST_SKIP() << "model missing: run tools/fetch_model (" << kModel << ")";
  }
  std::unique_ptr<EngineHost> load(const std::string& name, const std::string& graph_config,
                                   uint32_t budget = 2048) {
    EngineHost::Options o;
    o.manifest = write_manifest(name, graph_config, budget);
    return EngineHost::load(o, context_);
  }
  static const GraphCounters& counters(EngineHost& h) {
    BackendRef b = h.pipeline().backend();
    const void* c = b.vtable->lifecycle.get_extension(b.instance, "plinth_test.graph_counters/1");
    EXPECT_NE(c, nullptr);
    return *static_cast<const GraphCounters*>(c);
  }
  HostContext context_{make_stderr_logger(spdlog::level::warn)};
};

/// n prompts of 4..(4 + 3 * 11) tokens from the text (offset `salt`), or `long_len` tokens each.
std::vector<std::vector<int32_t>> prompts(EngineHost& h, uint32_t n, uint32_t salt,
                                          uint32_t long_len = 0) {
  const std::vector<int32_t> all = h.encode(std::string(kText) + " " + kText);
  std::vector<std::vector<int32_t>> out;
  for (uint32_t i = 0; i < n; ++i) {
    const uint32_t len = long_len != 0 ? long_len : 4 + 3 * ((i * 7 + salt) % 12);
    const uint32_t off = (i * 13 + salt * 5) % static_cast<uint32_t>(all.size() - len);
    out.emplace_back(all.begin() + off, all.begin() + off + len);
  }
  return out;
}

/// Runs all prompts as one continuous batch (greedy, `max_tokens` each); their ids in order.
std::vector<std::vector<int32_t>> run(EngineHost& h, const std::vector<std::vector<int32_t>>& ps,
                                      int32_t max_tokens) {
  Engine& e = h.engine();
  std::vector<uint64_t> ids;
  for (const auto& p : ps) {
    GenerationRequest r;
    r.prompt = p;
    r.params.temperature = 0.0f;
    r.params.max_tokens = max_tokens;
    r.params.ignore_eos = true;
    ids.push_back(e.add_request(std::move(r)));
  }
  while (e.has_unfinished()) e.step();
  std::vector<std::vector<int32_t>> out;
  for (uint64_t id : ids) {
    const Sequence* s = e.find(id);
    EXPECT_EQ(s->finish_reason().value_or(""), "length");
    out.emplace_back(s->output().begin(), s->output().end());
    e.release(id);
  }
  return out;
}

TEST_F(GraphEngine, PaddedReplaysGiveThePlainPathsIds) {
  auto plain = load("plain", "");
  auto graph = load("lazy", "{}");
  const GraphCounters& c = counters(*graph);
  // EngineHost called capture() after allocate_kv: buffers for 64 sequences, ceil(8192 / 16)
  // blocks wide; lazy, so nothing ran yet.
  EXPECT_EQ(c.prepare_calls, 1u);
  EXPECT_EQ(c.max_seqs, 64u);
  EXPECT_EQ(c.width, 512u);
  EXPECT_EQ(c.static_runs, 0u);

  // Each batch: one prefill step (eager), then 5 decode steps of exactly n sequences.
  const struct {
    uint32_t n, rows;
  } cases[] = {{1, 1}, {3, 4}, {13, 16}, {16, 16}, {30, 32}, {31, 32}, {32, 32}};
  uint64_t graph_steps = 0;
  for (const auto& k : cases) {
    SCOPED_TRACE("batch of " + std::to_string(k.n));
    const auto ps = prompts(*plain, k.n, k.n);
    const uint64_t rows_before = c.runs_by_rows[k.rows];
    const uint64_t dummies_before = c.dummy_rows;
    EXPECT_EQ(run(*graph, ps, 6), run(*plain, ps, 6));
    const uint64_t steps = graph->engine().stats().num_graph_steps;
    EXPECT_EQ(steps - graph_steps, 5u) << "every decode step replayed";
    graph_steps = steps;
    EXPECT_GE(c.runs_by_rows[k.rows] - rows_before, 5u) << "padded to " << k.rows << " rows";
    EXPECT_GE(c.dummy_rows - dummies_before, 5u * (k.rows - k.n));
  }
  EXPECT_EQ(c.eager_decode_only, 0u);
  // Lazy capture: one warm-up per size used (1, 4, 16, 32) besides the replays.
  EXPECT_EQ(c.static_runs, graph_steps + 4);
}

TEST_F(GraphEngine, MixedPrefillStepsRunEagerly) {
  // A 96-token budget: later prompts prefill in chunks while earlier sequences decode.
  auto plain = load("plain_mixed", "", 96);
  auto graph = load("lazy_mixed", "{}", 96);
  const GraphCounters& c = counters(*graph);
  for (uint32_t n : {13u, 30u}) {
    const auto ps = prompts(*plain, n, n + 1);
    EXPECT_EQ(run(*graph, ps, 6), run(*plain, ps, 6)) << n << " sequences";
  }
  EXPECT_GT(c.eager_mixed, 0u) << "mixed steps ran on the backend";
  EXPECT_EQ(c.eager_decode_only, 0u) << "decode-only steps were replayed";
  EXPECT_GT(graph->engine().stats().num_graph_steps, 0u);
}

TEST_F(GraphEngine, LargeBatchesAndWideTablesFallBackToEager) {
  // Graphs for at most 16 sequences over tables 3 blocks (48 tokens) wide.
  auto plain = load("plain_fallback", "");
  auto graph = load("small_graphs", R"({"max_capture_size": 16, "max_blocks_per_seq": 3})");
  const GraphCounters& c = counters(*graph);
  EXPECT_EQ(c.width, 3u);

  // 13 short sequences (at most 37 + 6 tokens): replayed.
  auto ps = prompts(*plain, 13, 2);
  EXPECT_EQ(run(*graph, ps, 6), run(*plain, ps, 6));
  EXPECT_EQ(c.eager_decode_only, 0u);
  const uint64_t replays = graph->engine().stats().num_graph_steps;
  EXPECT_EQ(replays, 5u);

  // 30 sequences: above the largest size, every decode step runs eagerly.
  ps = prompts(*plain, 30, 3);
  EXPECT_EQ(run(*graph, ps, 6), run(*plain, ps, 6));
  EXPECT_EQ(c.eager_decode_only, 5u);

  // 3 sequences of 60 prompt tokens: 4 blocks, wider than the 3 captured: eager again.
  ps = prompts(*plain, 3, 4, 60);
  EXPECT_EQ(run(*graph, ps, 6), run(*plain, ps, 6));
  EXPECT_EQ(c.eager_decode_only, 10u);
  EXPECT_EQ(graph->engine().stats().num_graph_steps, replays) << "no replay after the first batch";
}

TEST_F(GraphEngine, EagerCaptureAtLoad) {
  auto plain = load("plain_eager", "");
  auto graph = load("eager", R"({"eager_capture": true, "capture_sizes": [1, 4, 8]})");
  const GraphCounters& c = counters(*graph);
  // Every size captured at load over dummy-only batches: one warm-up each.
  EXPECT_EQ(c.static_runs, 3u);
  EXPECT_EQ(c.runs_by_rows[1], 1u);
  EXPECT_EQ(c.runs_by_rows[4], 1u);
  EXPECT_EQ(c.runs_by_rows[8], 1u);
  EXPECT_EQ(c.dummy_rows, 1u + 4u + 8u);
  const auto ps = prompts(*plain, 7, 5);
  EXPECT_EQ(run(*graph, ps, 6), run(*plain, ps, 6));
  const uint64_t replays = graph->engine().stats().num_graph_steps;
  EXPECT_GE(replays, 4u);
  EXPECT_EQ(c.static_runs, 3u + replays) << "no capture after load";
  EXPECT_EQ(c.eager_decode_only, 0u);
}

}  // namespace
}  // namespace plinth
