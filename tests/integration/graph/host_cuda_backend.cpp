// Test plugin (backend): backend_cpu's forward pass (CpuBackend, the real model) offering the
// CUDA extension "plinth.cuda_stream/1" on the host, so cuda_graph's runner runs end to end
// without a GPU. The "device" is host memory: prepare_static allocates the static buffers,
// load_static copies a padded decode batch into them, forward_static enqueues on a HostStream
// (tests/plugins/cuda_graph/host_stream.hpp: run now, or recorded while captured and run on
// replay) a CPU forward over the static rows, and read_logits exposes the rows it wrote.
//
// Dummy rows (slot -1) are checked against the padding rule (token 0, position 0, seq_len 1,
// block-table row all -1) and refused otherwise. backend_cpu needs a real slot for every token,
// so the forward gives dummy row i its own scratch block (allocate_kv keeps kScratchBlocks past
// the kv_cache's pool): a dummy row never touches a real sequence's KV, and a padding bug that
// did (a real slot on a dummy row) changes the real rows' ids.
//
// Extension "plinth_test.graph_counters/1" (GraphCounters below) tells the test which path each
// step took.
#include <plinth/backend.hpp>

#include <algorithm>
#include <array>
#include <cstring>
#include <string>
#include <vector>

#include "cpu_backend.hpp"
#include "host_stream.hpp"
#include "plinth/ext_cuda.h"

namespace {

using plinth::cuda_graph::testing::HostStream;
using plinth::sdk::Error;

constexpr uint32_t kScratchBlocks = 64;  // the largest capture size this backend accepts

/// What the test reads back (extension "plinth_test.graph_counters/1").
struct GraphCounters {
  uint64_t eager_forwards = 0;       // backend.forward calls
  uint64_t eager_decode_only = 0;    // ... whose every sequence brought exactly one token
  uint64_t eager_mixed = 0;          // ... mixing prefill chunks (> 1 token) and single tokens
  uint64_t prepare_calls = 0;        // prepare_static calls
  uint32_t max_seqs = 0, width = 0;  // the last prepare_static's shape
  uint64_t static_runs = 0;          // forward_static executions (warm-ups and replays)
  std::array<uint64_t, kScratchBlocks + 1> runs_by_rows{};  // static executions per row count
  uint64_t dummy_rows = 0;                                  // dummy rows loaded
};

class HostCudaBackend {
 public:
  explicit HostCudaBackend(const plinth_create_args& a) : cpu_(a) {}

  plinth_kv_layout kv_layout() const { return cpu_.kv_layout(); }
  plinth_memory_info memory_info() const { return cpu_.memory_info(); }
  void allocate_kv(uint32_t num_blocks, uint32_t block_size) {
    cpu_.allocate_kv(num_blocks + kScratchBlocks, block_size);
    num_blocks_ = num_blocks;
    block_size_ = block_size;
  }
  plinth_forward_output forward(const plinth_batch& b) {
    counters_.eager_forwards++;
    bool single = false, chunk = false;
    for (uint32_t s = 0; s < b.num_seqs; ++s) {
      (b.query_start[s + 1] - b.query_start[s] == 1 ? single : chunk) = true;
    }
    if (single && !chunk) counters_.eager_decode_only++;
    if (single && chunk) counters_.eager_mixed++;
    return cpu_.forward(b);
  }
  void copy_blocks(std::span<const plinth_block_copy> c) { cpu_.copy_blocks(c); }
  const void* extension(const char* name) const;

  // ---- plinth.cuda_stream/1 on the host ----
  void prepare_static(uint32_t max_seqs, uint32_t width) {
    if (max_seqs == 0 || max_seqs > kScratchBlocks || width == 0) {
      throw std::invalid_argument("host_cuda_backend: prepare_static(" + std::to_string(max_seqs) +
                                  ", " + std::to_string(width) + "): 1.." +
                                  std::to_string(kScratchBlocks) + " sequences, width >= 1");
    }
    counters_.prepare_calls++;
    counters_.max_seqs = max_seqs_ = max_seqs;
    counters_.width = width_ = width;
    tokens_.assign(max_seqs, 0);
    positions_.assign(max_seqs, 0);
    seq_lens_.assign(max_seqs, 1);
    slots_.assign(max_seqs, -1);
    tables_.assign(size_t{max_seqs} * width, -1);
  }
  void load_static(const plinth_batch& b) {
    if (stream_.capturing) throw Error(PLINTH_ERR_INTERNAL, "load_static inside a capture");
    if (max_seqs_ == 0) throw std::invalid_argument("load_static before prepare_static");
    if (b.num_seqs > max_seqs_ || b.num_tokens != b.num_seqs || b.max_blocks_per_seq != width_ ||
        b.block_size != block_size_) {
      throw std::invalid_argument("load_static: batch of " + std::to_string(b.num_seqs) +
                                  " sequences, " + std::to_string(b.num_tokens) +
                                  " tokens, width " + std::to_string(b.max_blocks_per_seq) +
                                  " does not fit the static buffers");
    }
    for (uint32_t i = 0; i < b.num_seqs; ++i) {
      if (b.query_start[i] != static_cast<int32_t>(i)) {
        throw std::invalid_argument("load_static: not one token per sequence");
      }
      if (b.slot_mapping[i] >= 0) continue;
      const int32_t* row = b.block_tables + size_t{i} * width_;
      const bool clean = b.slot_mapping[i] == -1 && b.token_ids[i] == 0 && b.positions[i] == 0 &&
                         b.seq_lens[i] == 1 &&
                         std::all_of(row, row + width_, [](int32_t x) { return x == -1; });
      if (!clean) {
        throw std::invalid_argument("load_static: row " + std::to_string(i) + " has slot " +
                                    std::to_string(b.slot_mapping[i]) +
                                    " but is not a clean dummy row");
      }
      counters_.dummy_rows++;
    }
    std::copy_n(b.token_ids, b.num_seqs, tokens_.begin());
    std::copy_n(b.positions, b.num_seqs, positions_.begin());
    std::copy_n(b.seq_lens, b.num_seqs, seq_lens_.begin());
    std::copy_n(b.slot_mapping, b.num_seqs, slots_.begin());
    std::copy_n(b.block_tables, size_t{b.num_seqs} * width_, tables_.begin());
    argmax_only_ = PLINTH_HAS_FIELD(&b, plinth_batch, argmax_only) ? b.argmax_only : 0;
  }
  void forward_static(uint32_t n) {
    if (n == 0 || n > max_seqs_) throw std::invalid_argument("forward_static: bad row count");
    stream_.enqueue([this, n] { run_static(n); });
  }
  plinth_forward_output read_logits(uint32_t num_logits) {
    if (stream_.capturing) throw Error(PLINTH_ERR_INTERNAL, "read_logits inside a capture");
    if (num_logits > rows_) throw std::invalid_argument("read_logits: more rows than computed");
    plinth_forward_output out{};
    out.struct_size = sizeof(out);
    out.num_logits = num_logits;
    out.vocab_size = vocab_;
    out.logits = logits_.data();
    if (argmax_computed_) out.argmax_ids = argmax_.data();
    return out;
  }
  void* stream() { return &stream_; }

 private:
  // The "kernels" of one replayed step: a CPU forward over the first n static rows.
  void run_static(uint32_t n) {
    std::vector<int32_t> tables(tables_.begin(), tables_.begin() + size_t{n} * width_);
    std::vector<int32_t> slots(slots_.begin(), slots_.begin() + n);
    for (uint32_t i = 0; i < n; ++i) {
      if (slots[i] >= 0) continue;
      const auto scratch = static_cast<int32_t>(num_blocks_ + i);
      tables[size_t{i} * width_] = scratch;
      slots[i] = scratch * static_cast<int32_t>(block_size_);
    }
    std::vector<int32_t> query_start(n + 1), logits_indices(n);
    for (uint32_t i = 0; i <= n; ++i) query_start[i] = static_cast<int32_t>(i);
    for (uint32_t i = 0; i < n; ++i) logits_indices[i] = static_cast<int32_t>(i);
    plinth_batch b{};
    b.struct_size = sizeof(b);
    b.num_tokens = b.num_seqs = b.num_logits = n;
    b.token_ids = tokens_.data();
    b.positions = positions_.data();
    b.query_start = query_start.data();
    b.seq_lens = seq_lens_.data();
    b.block_tables = tables.data();
    b.max_blocks_per_seq = width_;
    b.block_size = block_size_;
    b.slot_mapping = slots.data();
    b.logits_indices = logits_indices.data();
    b.argmax_only = argmax_only_;
    const plinth_forward_output out = cpu_.forward(b);
    vocab_ = out.vocab_size;
    rows_ = n;
    logits_.assign(out.logits, out.logits + size_t{n} * out.vocab_size);
    argmax_computed_ = out.argmax_ids != nullptr;
    if (argmax_computed_) argmax_.assign(out.argmax_ids, out.argmax_ids + n);
    counters_.static_runs++;
    counters_.runs_by_rows[n]++;
  }

  plinth::cpu::CpuBackend cpu_;
  uint32_t num_blocks_ = 0, block_size_ = 0;
  HostStream stream_;
  uint32_t max_seqs_ = 0, width_ = 0;
  std::vector<int32_t> tokens_, positions_, seq_lens_, slots_, tables_;  // the static buffers
  uint32_t argmax_only_ = 0;
  std::vector<float> logits_;  // [rows_, vocab_] of the last static run
  std::vector<int32_t> argmax_;
  bool argmax_computed_ = false;
  uint32_t rows_ = 0, vocab_ = 0;
  GraphCounters counters_;
};

HostCudaBackend& self(plinth_instance* i) {
  return plinth::sdk::self<HostCudaBackend>(i);
}

plinth_cuda_stream_ext make_ext() {
  using plinth::sdk::guard;
  plinth_cuda_stream_ext e{};
  e.struct_size = sizeof(e);
  e.get_stream = [](plinth_instance* i) { return self(i).stream(); };
  e.prepare_static = [](plinth_instance* i, uint32_t n, uint32_t w, plinth_error* err) {
    return guard(err, [&] { self(i).prepare_static(n, w); });
  };
  e.load_static = [](plinth_instance* i, const plinth_batch* b, plinth_error* err) {
    return guard(err, [&] { self(i).load_static(*b); });
  };
  e.forward_static = [](plinth_instance* i, uint32_t n, plinth_error* err) {
    return guard(err, [&] { self(i).forward_static(n); });
  };
  e.read_logits = [](plinth_instance* i, uint32_t n, plinth_forward_output* out,
                     plinth_error* err) {
    return guard(err, [&] { plinth::sdk::write_out(out, self(i).read_logits(n)); });
  };
  return e;
}

const plinth_cuda_stream_ext kExt = make_ext();

const void* HostCudaBackend::extension(const char* name) const {
  if (name == nullptr) return nullptr;
  if (std::strcmp(name, PLINTH_EXT_CUDA_STREAM) == 0) return &kExt;
  if (std::strcmp(name, "plinth_test.graph_counters/1") == 0) return &counters_;
  return cpu_.extension(name);
}

constexpr const char* kSchema = R"json({
  "type": "object",
  "additionalProperties": false,
  "properties": {
    "threads": {"type": "integer", "minimum": 1, "maximum": 1024,
                "description": "backend_cpu's compute threads"}
  }
})json";

const plinth_backend_vtable kTable = plinth::sdk::backend_vtable<HostCudaBackend>();

}  // namespace

PLINTH_PLUGIN("host_cuda_backend", "0.1.0", PLINTH_KIND_BACKEND,
              "test: backend_cpu offering plinth.cuda_stream/1 on the host", kSchema, &kTable)
