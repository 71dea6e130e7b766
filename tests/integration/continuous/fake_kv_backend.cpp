// A deterministic fake backend for the engine invariant test (test-only plugin). It keeps a real
// "KV cache": one int32 per slot holding the token written there, so it behaves like
// PagedAttention bookkeeping-wise: it writes each new token into the slot `slot_mapping` names,
// checks that the slot agrees with the block table and position, and computes each wanted logit
// row from the history it reads back through the block table (history_model.hpp) as a one-hot.
// It refuses (INVALID_ARGUMENT) a batch over the budgets in its config, a read of a slot never
// written for that position, or a slot outside the pool, so the engine test fails loudly.
#include <algorithm>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "history_model.hpp"
#include "plinth/backend.hpp"
#include "plinth/plugin.hpp"

namespace {

using plinth::sdk::Error;

const char* const kSchema = R"json({
  "type": "object", "additionalProperties": false,
  "properties": {
    "max_batch_tokens": {"type": "integer", "minimum": 1, "default": 1048576,
                         "description": "refuse a batch of more new tokens (the token budget)"},
    "max_batch_seqs": {"type": "integer", "minimum": 1, "default": 65536,
                       "description": "refuse a batch of more sequences (max_num_seqs)"},
    "argmax": {"type": "string", "enum": ["none", "require"], "default": "none",
               "description": "require: demand argmax_only on every batch with logits rows and answer with argmax ids and no logits (ABI 1.3)"}
  }})json";

[[noreturn]] void fail(const std::string& what) {
  throw Error(PLINTH_ERR_INVALID_ARGUMENT, "fake_kv_backend: " + what);
}

class FakeKvBackend {
 public:
  explicit FakeKvBackend(const plinth_create_args& a) {
    if (a.model == nullptr) throw Error(PLINTH_ERR_INVALID_ARGUMENT, "fake_kv_backend: no model");
    model_ = a.model->config;
    auto c = nlohmann::json::parse(a.config_json != nullptr ? a.config_json : "{}");
    max_tokens_ = c.value("max_batch_tokens", 1u << 20);
    max_seqs_ = c.value("max_batch_seqs", 65536u);
    // "require": every batch with logits rows must say argmax_only (the test sends greedy
    // requests only), and gets argmax ids with logits = NULL, as a GPU backend answers (ABI 1.3).
    argmax_required_ = c.value("argmax", std::string("none")) == "require";
  }
  plinth_kv_layout kv_layout() {
    plinth_kv_layout l{};
    l.n_layers = 1;
    l.n_kv_heads = 1;
    l.head_dim = 1;
    l.dtype = PLINTH_DTYPE_F32;
    l.bytes_per_token = 8;  // one int32 token + one int32 position per slot
    return l;
  }
  plinth_memory_info memory_info() {
    plinth_memory_info m{};
    m.device_kind = PLINTH_DEVICE_CPU;
    m.free_bytes = m.total_bytes = 64ull << 20;
    return m;
  }
  void allocate_kv(uint32_t num_blocks, uint32_t block_size) {
    block_size_ = block_size;
    tokens_.assign(static_cast<size_t>(num_blocks) * block_size, -1);
    positions_.assign(tokens_.size(), -1);
  }
  void copy_blocks(std::span<const plinth_block_copy> copies) {
    for (const plinth_block_copy& c : copies) {
      for (uint32_t o = 0; o < block_size_; ++o) {
        tokens_.at(size_t(c.dst) * block_size_ + o) = tokens_.at(size_t(c.src) * block_size_ + o);
        positions_.at(size_t(c.dst) * block_size_ + o) =
            positions_.at(size_t(c.src) * block_size_ + o);
      }
    }
  }
  plinth_forward_output forward(const plinth_batch& b) {
    if (b.num_tokens > max_tokens_) {
      fail("batch of " + std::to_string(b.num_tokens) + " tokens exceeds the budget " +
           std::to_string(max_tokens_));
    }
    if (b.num_seqs > max_seqs_) {
      fail("batch of " + std::to_string(b.num_seqs) + " sequences exceeds " +
           std::to_string(max_seqs_));
    }
    if (b.block_size != block_size_) fail("batch block_size differs from allocate_kv's");
    // Write K/V: the slot must be the one the block table gives for the token's position.
    for (uint32_t s = 0; s < b.num_seqs; ++s) {
      for (int32_t i = b.query_start[s]; i < b.query_start[s + 1]; ++i) {
        const int32_t pos = b.positions[i];
        const size_t slot = slot_of(b, s, pos);
        if (static_cast<int64_t>(slot) != b.slot_mapping[i]) {
          fail("slot_mapping[" + std::to_string(i) + "] = " + std::to_string(b.slot_mapping[i]) +
               " but the block table gives " + std::to_string(slot));
        }
        tokens_[slot] = b.token_ids[i];
        positions_[slot] = pos;
      }
    }
    // Read the history back through the block tables and emit one-hot logits.
    // At least one element: a step of prefill chunks only wants no logits, but the engine expects a
    // non-null pointer.
    logits_.assign(std::max<size_t>(1, size_t(b.num_logits) * model_.vocab_size), 0.0f);
    uint32_t s = 0;
    for (uint32_t k = 0; k < b.num_logits; ++k) {
      const int32_t idx = b.logits_indices[k];
      while (s + 1 < b.num_seqs && idx >= b.query_start[s + 1]) ++s;
      const int32_t pos = b.positions[idx];
      int32_t window[plinth_test::kHistoryWindow];
      uint32_t n = 0;
      for (int32_t p = std::max(0, pos - int32_t(plinth_test::kHistoryWindow) + 1); p <= pos; ++p) {
        const size_t slot = slot_of(b, s, p);
        if (positions_[slot] != p) {
          fail("sequence " + std::to_string(s) + " reads position " + std::to_string(p) +
               " from slot " + std::to_string(slot) + ", which holds position " +
               std::to_string(positions_[slot]));
        }
        window[n++] = tokens_[slot];
      }
      const int32_t next = plinth_test::next_token({window, n}, uint32_t(pos), model_.vocab_size);
      logits_[size_t(k) * model_.vocab_size + size_t(next)] = 1.0f;
    }
    plinth_forward_output o{};
    o.num_logits = b.num_logits;
    o.vocab_size = model_.vocab_size;
    o.logits = logits_.data();
    if (argmax_required_ && b.num_logits > 0) {
      if (b.argmax_only == 0) fail("a batch of greedy requests came without argmax_only");
      argmax_.resize(b.num_logits);
      for (uint32_t k = 0; k < b.num_logits; ++k) {
        const float* row = logits_.data() + size_t(k) * model_.vocab_size;
        argmax_[k] = static_cast<int32_t>(std::max_element(row, row + model_.vocab_size) - row);
      }
      o.logits = nullptr;
      o.argmax_ids = argmax_.data();
    }
    return o;
  }

 private:
  size_t slot_of(const plinth_batch& b, uint32_t s, int32_t pos) const {
    if (pos < 0 || pos >= b.seq_lens[s]) fail("position " + std::to_string(pos) + " out of range");
    const uint32_t j = uint32_t(pos) / block_size_;
    if (j >= b.max_blocks_per_seq) fail("position past the block table");
    const int32_t block = b.block_tables[size_t(s) * b.max_blocks_per_seq + j];
    const size_t slot = size_t(block) * block_size_ + uint32_t(pos) % block_size_;
    if (block < 0 || slot >= tokens_.size()) {
      fail("block " + std::to_string(block) + " outside the pool");
    }
    return slot;
  }

  plinth_model_config model_{};
  uint32_t max_tokens_ = 0, max_seqs_ = 0, block_size_ = 0;
  std::vector<int32_t> tokens_, positions_;
  std::vector<float> logits_;
  std::vector<int32_t> argmax_;
  bool argmax_required_ = false;
};

const plinth_backend_vtable kTable = plinth::sdk::backend_vtable<FakeKvBackend>();

}  // namespace

PLINTH_PLUGIN("fake_kv_backend", "0.1.0", PLINTH_KIND_BACKEND,
              "deterministic fake backend with a token-per-slot KV cache, for engine tests",
              kSchema, &kTable)
