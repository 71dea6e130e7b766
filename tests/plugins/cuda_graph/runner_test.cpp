// cuda_graph's GraphRunner over a fake CUDA backend whose "plinth.cuda_stream/1" lives on the
// host (HostStream, host_stream.hpp): forward_static enqueues "logits" computed from the static
// buffers (row i = [token, position, seq_len, slot] of static row i), so a replay that did not
// recompute from the freshly loaded buffers shows stale rows. Checked: lazy capture (one warm-up
// run and one capture per size, on first use only), eager capture of every size over dummy-only
// batches, the padded batch the backend receives, can_run's fallbacks, the static shape from the
// model and the kv_cache (or the override), and the errors.
#include <gtest/gtest.h>

#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "graph_runner.hpp"
#include "host_stream.hpp"
#include "plinth/kv_cache.h"

namespace plinth::cuda_graph {
namespace {

using testing::HostGraphDriver;
using testing::HostStream;
using V = std::vector<int32_t>;

constexpr uint32_t kVocab = 4;

struct FakeCudaBackend {
  HostStream stream;
  uint32_t max_seqs = 0, width = 0;
  uint32_t prepare_calls = 0;
  int32_t prepare_status = PLINTH_OK;
  V tokens, positions, seq_lens, slots, tables;  // the static buffers
  std::vector<float> logits;                     // [max_seqs, kVocab]
  std::vector<plinth_batch> loaded;              // every batch given to load_static
  std::vector<V> loaded_tables, loaded_slots;
  std::vector<uint32_t> executed;  // num_seqs of every forward_static that ran
  uint32_t forward_static_calls = 0;
  plinth_cuda_stream_ext ext{};
  plinth_backend_vtable vtable{};

  FakeCudaBackend();
  plinth_instance* inst() { return reinterpret_cast<plinth_instance*>(this); }
  static FakeCudaBackend& of(plinth_instance* i) { return *reinterpret_cast<FakeCudaBackend*>(i); }
};

int32_t fail(plinth_error* e, int32_t status, const char* msg) {
  if (e != nullptr) {
    e->status = status;
    std::snprintf(e->message, sizeof(e->message), "%s", msg);
  }
  return status;
}

FakeCudaBackend::FakeCudaBackend() {
  ext.struct_size = sizeof(ext);
  ext.get_stream = [](plinth_instance* i) -> void* { return &of(i).stream; };
  ext.prepare_static = [](plinth_instance* i, uint32_t n, uint32_t w, plinth_error* e) {
    FakeCudaBackend& b = of(i);
    b.prepare_calls++;
    if (b.prepare_status != PLINTH_OK) return fail(e, b.prepare_status, "no room for the buffers");
    b.max_seqs = n;
    b.width = w;
    b.tokens.assign(n, -7);
    b.positions.assign(n, -7);
    b.seq_lens.assign(n, -7);
    b.slots.assign(n, -7);
    b.tables.assign(size_t{n} * w, -7);
    b.logits.assign(size_t{n} * kVocab, -7.0f);
    return int32_t{PLINTH_OK};
  };
  ext.load_static = [](plinth_instance* i, const plinth_batch* p, plinth_error* e) {
    FakeCudaBackend& b = of(i);
    if (b.stream.capturing) return fail(e, PLINTH_ERR_INTERNAL, "load_static inside a capture");
    if (p->num_seqs > b.max_seqs || p->max_blocks_per_seq != b.width) {
      return fail(e, PLINTH_ERR_INVALID_ARGUMENT, "batch does not fit the static buffers");
    }
    b.loaded.push_back(*p);
    b.loaded_tables.emplace_back(p->block_tables, p->block_tables + p->num_seqs * b.width);
    b.loaded_slots.emplace_back(p->slot_mapping, p->slot_mapping + p->num_seqs);
    std::copy_n(p->token_ids, p->num_seqs, b.tokens.begin());
    std::copy_n(p->positions, p->num_seqs, b.positions.begin());
    std::copy_n(p->seq_lens, p->num_seqs, b.seq_lens.begin());
    std::copy_n(p->slot_mapping, p->num_seqs, b.slots.begin());
    std::copy_n(p->block_tables, p->num_seqs * b.width, b.tables.begin());
    return int32_t{PLINTH_OK};
  };
  ext.forward_static = [](plinth_instance* i, uint32_t n, plinth_error* e) {
    FakeCudaBackend& b = of(i);
    b.forward_static_calls++;
    if (n > b.max_seqs) return fail(e, PLINTH_ERR_INVALID_ARGUMENT, "too many rows");
    b.stream.enqueue([&b, n] {
      for (uint32_t r = 0; r < n; ++r) {
        b.logits[r * kVocab + 0] = float(b.tokens[r]);
        b.logits[r * kVocab + 1] = float(b.positions[r]);
        b.logits[r * kVocab + 2] = float(b.seq_lens[r]);
        b.logits[r * kVocab + 3] = float(b.slots[r]);
      }
      b.executed.push_back(n);
    });
    return int32_t{PLINTH_OK};
  };
  ext.read_logits = [](plinth_instance* i, uint32_t n, plinth_forward_output* out,
                       plinth_error* e) {
    FakeCudaBackend& b = of(i);
    if (b.stream.capturing) return fail(e, PLINTH_ERR_INTERNAL, "read_logits inside a capture");
    out->num_logits = n;
    out->vocab_size = kVocab;
    out->logits = b.logits.data();
    return int32_t{PLINTH_OK};
  };
  vtable.struct_size = sizeof(vtable);
  vtable.lifecycle.struct_size = sizeof(vtable.lifecycle);
  vtable.lifecycle.get_extension = [](plinth_instance* i, const char* name) -> const void* {
    return std::strcmp(name, PLINTH_EXT_CUDA_STREAM) == 0 ? &of(i).ext : nullptr;
  };
}

// A kv_cache answering get_info only: blocks of 4 tokens.
plinth_kv_cache_vtable kv_vtable() {
  plinth_kv_cache_vtable v{};
  v.struct_size = sizeof(v);
  v.get_info = [](plinth_instance*, plinth_kv_info* out, plinth_error*) {
    out->block_size = 4;
    out->num_blocks = 100;
    out->bytes_per_block = 1024;
    return int32_t{PLINTH_OK};
  };
  return v;
}
const plinth_kv_cache_vtable kKv = kv_vtable();

struct Rig {
  FakeCudaBackend backend;
  plinth_model_desc model{};
  HostGraphDriver* driver = nullptr;  // owned by the runner
  std::string config;
  bool with_kv = true, with_model = true;

  std::unique_ptr<GraphRunner> make() {
    model.struct_size = sizeof(model);
    model.config.context_length = 30;  // 8 blocks of 4
    plinth_create_args a{};
    a.struct_size = sizeof(a);
    a.instance_name = "graphs";
    a.config_json = config.c_str();
    a.model = with_model ? &model : nullptr;
    a.backend = {&backend.vtable, backend.inst()};
    if (with_kv) a.kv_cache = {&kKv, reinterpret_cast<plinth_instance*>(&backend)};
    auto d = std::make_unique<HostGraphDriver>();
    driver = d.get();
    return std::make_unique<GraphRunner>(a, std::move(d));
  }
};

/// n decode sequences: sequence i has token 100 + i + salt, length 3 + i, table row [i] (one
/// block of 4 while the length fits), slot i * 4 + (2 + i) % 4.
struct Decode {
  V tokens, positions, query_start, seq_lens, tables, slots, logits;
  plinth_batch b{};
  Decode(uint32_t n, int32_t salt, uint32_t width = 1) {
    for (uint32_t i = 0; i < n; ++i) {
      const auto s = static_cast<int32_t>(i);
      tokens.push_back(100 + s + salt);
      seq_lens.push_back(3 + s % 2);
      positions.push_back(2 + s % 2);
      query_start.push_back(s);
      for (uint32_t j = 0; j < width; ++j) tables.push_back(j == 0 ? s : -1);
      slots.push_back(s * 4 + 2 + s % 2);
      logits.push_back(s);
    }
    query_start.push_back(static_cast<int32_t>(n));
    b.struct_size = sizeof(b);
    b.num_tokens = b.num_seqs = b.num_logits = n;
    b.token_ids = tokens.data();
    b.positions = positions.data();
    b.query_start = query_start.data();
    b.seq_lens = seq_lens.data();
    b.block_tables = tables.data();
    b.max_blocks_per_seq = width;
    b.block_size = 4;
    b.slot_mapping = slots.data();
    b.logits_indices = logits.data();
  }
};

/// The fake's logits rows [token, position, seq_len, slot] must be the real rows of `d`.
void expect_rows(const plinth_forward_output& out, const Decode& d) {
  ASSERT_EQ(out.num_logits, d.b.num_seqs);
  ASSERT_EQ(out.vocab_size, kVocab);
  for (uint32_t r = 0; r < d.b.num_seqs; ++r) {
    EXPECT_EQ(out.logits[r * kVocab + 0], float(d.tokens[r])) << "row " << r;
    EXPECT_EQ(out.logits[r * kVocab + 1], float(d.positions[r])) << "row " << r;
    EXPECT_EQ(out.logits[r * kVocab + 2], float(d.seq_lens[r])) << "row " << r;
    EXPECT_EQ(out.logits[r * kVocab + 3], float(d.slots[r])) << "row " << r;
  }
}

TEST(CudaGraphRunner, LazyCaptureOncePerSizeThenReplays) {
  Rig s;
  auto runner = s.make();
  runner->capture();  // lazy: only the static buffers
  EXPECT_EQ(s.backend.prepare_calls, 1u);
  EXPECT_EQ(s.backend.max_seqs, 64u);
  EXPECT_EQ(s.backend.width, 8u) << "ceil(context 30 / block 4)";
  EXPECT_EQ(s.driver->num_captures(), 0u);
  EXPECT_TRUE(runner->captured_sizes().empty());

  Decode d3(3, 0);
  ASSERT_TRUE(runner->can_run(d3.b));
  expect_rows(runner->run(d3.b), d3);
  EXPECT_EQ(runner->captured_sizes(), (std::vector<uint32_t>{4}));
  EXPECT_EQ(s.driver->num_captures(), 1u);
  // Warm-up ran, the capture recorded without running, the replay ran: 2 executions of 4 rows.
  EXPECT_EQ(s.backend.forward_static_calls, 2u);
  EXPECT_EQ(s.backend.executed, (std::vector<uint32_t>{4, 4}));
  // The backend got the batch padded to 4 rows, 8 blocks wide.
  ASSERT_EQ(s.backend.loaded.size(), 1u);
  EXPECT_EQ(s.backend.loaded[0].num_seqs, 4u);
  EXPECT_EQ(s.backend.loaded[0].num_logits, 3u);
  EXPECT_EQ(s.backend.loaded_slots[0], (V{2, 7, 10, -1}));
  V want_tables(4 * 8, -1);
  want_tables[0] = 0;
  want_tables[8] = 1;
  want_tables[16] = 2;
  EXPECT_EQ(s.backend.loaded_tables[0], want_tables);
  // The dummy row's "logits" are a dummy's: token 0, position 0, seq_len 1, slot -1.
  EXPECT_EQ(s.backend.logits[3 * kVocab + 0], 0.0f);
  EXPECT_EQ(s.backend.logits[3 * kVocab + 2], 1.0f);
  EXPECT_EQ(s.backend.logits[3 * kVocab + 3], -1.0f);

  // Same size, new tokens: no capture, the replay recomputes from the new static contents.
  Decode d4(4, 50);
  expect_rows(runner->run(d4.b), d4);
  EXPECT_EQ(s.driver->num_captures(), 1u);
  EXPECT_EQ(s.backend.forward_static_calls, 2u) << "a replay calls nothing in the backend";
  EXPECT_EQ(s.backend.executed.size(), 3u);
  EXPECT_EQ(s.driver->num_launches(), 2u);

  Decode d1(1, 7), d13(13, 1);
  expect_rows(runner->run(d1.b), d1);
  expect_rows(runner->run(d13.b), d13);
  expect_rows(runner->run(d3.b), d3);
  EXPECT_EQ(runner->captured_sizes(), (std::vector<uint32_t>{1, 4, 16}));
  EXPECT_EQ(runner->num_replays(), 5u);
}

TEST(CudaGraphRunner, EagerCaptureTakesEverySizeOverDummyBatches) {
  Rig s;
  s.config = R"({"eager_capture": true, "capture_sizes": [1, 2, 8]})";
  auto runner = s.make();
  runner->capture();
  EXPECT_EQ(runner->captured_sizes(), (std::vector<uint32_t>{1, 2, 8}));
  EXPECT_EQ(s.backend.max_seqs, 8u);
  ASSERT_EQ(s.backend.loaded.size(), 3u);
  for (size_t i = 0; i < 3; ++i) {
    EXPECT_EQ(s.backend.loaded[i].num_logits, 0u);
    for (int32_t slot : s.backend.loaded_slots[i]) EXPECT_EQ(slot, -1) << "dummy rows only";
    for (int32_t block : s.backend.loaded_tables[i]) EXPECT_EQ(block, -1);
  }
  EXPECT_EQ(s.backend.executed, (std::vector<uint32_t>{1, 2, 8})) << "the warm-ups";
  Decode d5(5, 3);
  expect_rows(runner->run(d5.b), d5);
  EXPECT_EQ(s.driver->num_captures(), 3u) << "nothing captured after start-up";
}

TEST(CudaGraphRunner, CanRunRefusesWhatTheGraphsCannotHold) {
  Rig s;
  s.config = R"({"max_capture_size": 16})";
  auto runner = s.make();
  // Before capture(): the shape is predicted from the batch's block size.
  EXPECT_TRUE(runner->can_run(Decode(16, 0).b));
  EXPECT_FALSE(runner->can_run(Decode(17, 0).b)) << "above the largest size";
  EXPECT_TRUE(runner->can_run(Decode(2, 0, 8).b));
  EXPECT_FALSE(runner->can_run(Decode(2, 0, 9).b)) << "table wider than 8 blocks";
  Decode partial(3, 0);
  partial.b.num_logits = 2;
  EXPECT_FALSE(runner->can_run(partial.b));
  EXPECT_THROW(runner->run(partial.b), std::invalid_argument);
  EXPECT_EQ(s.driver->num_captures(), 0u);
}

TEST(CudaGraphRunner, WithoutKvCacheTheFirstBatchSizesTheBuffers) {
  Rig s;
  s.with_kv = false;
  auto runner = s.make();
  runner->capture();
  EXPECT_EQ(s.backend.prepare_calls, 0u);
  Decode d2(2, 0);
  expect_rows(runner->run(d2.b), d2);
  EXPECT_EQ(s.backend.prepare_calls, 1u);
  EXPECT_EQ(s.backend.width, 8u);
  EXPECT_EQ(runner->shape().block_size, 4u);

  Rig eager;
  eager.with_kv = false;
  eager.config = R"({"eager_capture": true})";
  EXPECT_THROW(eager.make()->capture(), std::invalid_argument);
}

TEST(CudaGraphRunner, MaxBlocksPerSeqOverridesTheModel) {
  Rig s;
  s.with_model = false;
  EXPECT_THROW(s.make(), std::invalid_argument) << "no model, no override: width unknown";
  s.config = R"({"max_blocks_per_seq": 3})";
  auto runner = s.make();
  runner->capture();
  EXPECT_EQ(s.backend.width, 3u);
  EXPECT_FALSE(runner->can_run(Decode(1, 0, 4).b));
}

TEST(CudaGraphRunner, ErrorsCarryTheBackendsStatus) {
  Rig s;
  s.backend.prepare_status = PLINTH_ERR_OUT_OF_MEMORY;
  auto runner = s.make();
  try {
    runner->capture();
    ADD_FAILURE() << "capture succeeded";
  } catch (const sdk::Error& e) {
    EXPECT_EQ(e.status(), PLINTH_ERR_OUT_OF_MEMORY);
    EXPECT_NE(std::string(e.what()).find("prepare_static failed: no room"), std::string::npos);
  }
}

TEST(CudaGraphRunner, ABackendWithoutTheExtensionIsUnsupported) {
  Rig s;
  s.backend.vtable.lifecycle.get_extension = nullptr;
  try {
    s.make();
    ADD_FAILURE() << "created";
  } catch (const sdk::Error& e) {
    EXPECT_EQ(e.status(), PLINTH_ERR_UNSUPPORTED);
    EXPECT_NE(std::string(e.what()).find("plinth.cuda_stream/1"), std::string::npos);
  }
  Rig partial;
  partial.backend.ext.forward_static = nullptr;
  EXPECT_THROW(partial.make(), sdk::Error);
}

}  // namespace
}  // namespace plinth::cuda_graph
