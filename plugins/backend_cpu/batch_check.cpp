#include "batch_check.hpp"

#include <stdexcept>
#include <string>

namespace plinth::cpu {
namespace {

[[noreturn]] void fail(const std::string& field, const std::string& why) {
  throw std::invalid_argument("forward: batch." + field + " " + why);
}

std::string at(const char* field, int64_t i) {
  return std::string(field) + "[" + std::to_string(i) + "]";
}

std::string at2(const char* field, int64_t i, int64_t j) {
  return std::string(field) + "[" + std::to_string(i) + "][" + std::to_string(j) + "]";
}

// The fields as a whole: struct size, counts against the limits, NULL arrays, block size and
// the two ends of query_start.
void check_fields(const plinth_batch& b, const BatchLimits& lim) {
  // Every 1.0 field is needed; later ones (argmax_only) are read with PLINTH_HAS_FIELD.
  constexpr size_t kNeeded = offsetof(plinth_batch, logits_indices) + sizeof(const int32_t*);
  if (b.struct_size < kNeeded) {
    fail("struct_size", "= " + std::to_string(b.struct_size) + " is smaller than " +
                            std::to_string(kNeeded) + " (every ABI 1.0 field is needed)");
  }
  const int64_t nt = b.num_tokens;
  const int64_t ns = b.num_seqs;
  if (nt > lim.max_batch_tokens) {
    fail("num_tokens", "= " + std::to_string(nt) +
                           " exceeds max_batch_tokens=" + std::to_string(lim.max_batch_tokens) +
                           " (raise the backend's max_batch_tokens option or lower the "
                           "scheduler's token budget)");
  }
  if (nt > 0 && ns == 0) fail("num_seqs", "= 0 with num_tokens=" + std::to_string(nt));
  if (nt > 0 && (b.token_ids == nullptr || b.positions == nullptr || b.slot_mapping == nullptr)) {
    fail(b.token_ids == nullptr   ? "token_ids"
         : b.positions == nullptr ? "positions"
                                  : "slot_mapping",
         "is NULL with num_tokens=" + std::to_string(nt));
  }
  if (b.query_start == nullptr) fail("query_start", "is NULL");
  if (ns > 0 && (b.seq_lens == nullptr || b.block_tables == nullptr)) {
    fail(b.seq_lens == nullptr ? "seq_lens" : "block_tables",
         "is NULL with num_seqs=" + std::to_string(ns));
  }
  if (b.num_logits > 0 && b.logits_indices == nullptr) {
    fail("logits_indices", "is NULL with num_logits=" + std::to_string(b.num_logits));
  }
  if (nt > 0 && static_cast<int64_t>(b.block_size) != lim.block_size) {
    fail("block_size", "= " + std::to_string(b.block_size) +
                           " differs from the allocated block "
                           "size " +
                           std::to_string(lim.block_size) + " (allocate_kv)");
  }
  if (b.query_start[0] != 0)
    fail("query_start[0]", "= " + std::to_string(b.query_start[0]) + " must be 0");
  if (b.query_start[ns] != nt) {
    fail(at("query_start", ns),
         "= " + std::to_string(b.query_start[ns]) + " must equal num_tokens=" + std::to_string(nt));
  }
}

// Sequence s's new tokens [q0, q1): positions continue its context of `len`, slots follow its
// block table, ids are in the vocabulary.
void check_new_tokens(const plinth_batch& b, const BatchLimits& lim, int64_t s, int64_t q0,
                      int64_t q1, int64_t len, const int32_t* table) {
  const int64_t bs = lim.block_size;
  const int64_t n_new = q1 - q0;
  for (int64_t t = q0; t < q1; ++t) {
    const int64_t pos = len - n_new + (t - q0);
    if (b.positions[t] != pos) {
      fail(at("positions", t), "= " + std::to_string(b.positions[t]) + " but sequence " +
                                   std::to_string(s) + " puts its new token there at position " +
                                   std::to_string(pos) + " (seq_lens - new tokens + k)");
    }
    const int64_t slot = static_cast<int64_t>(table[pos / bs]) * bs + pos % bs;
    if (b.slot_mapping[t] != slot) {
      fail(at("slot_mapping", t), "= " + std::to_string(b.slot_mapping[t]) +
                                      " but the block table of sequence " + std::to_string(s) +
                                      " puts position " + std::to_string(pos) + " at slot " +
                                      std::to_string(slot));
    }
    if (b.token_ids[t] < 0 || b.token_ids[t] >= lim.vocab) {
      fail(at("token_ids", t), "= " + std::to_string(b.token_ids[t]) +
                                   " is outside [0, vocab=" + std::to_string(lim.vocab) + ")");
    }
  }
}

// Sequence s: its query range, its length against the context and its table, the blocks that
// length uses, then its new tokens.
void check_sequence(const plinth_batch& b, const BatchLimits& lim, int64_t s) {
  const int64_t nt = b.num_tokens;
  const int64_t bs = lim.block_size;
  const int64_t mb = b.max_blocks_per_seq;
  const int64_t q0 = b.query_start[s], q1 = b.query_start[s + 1];
  if (q1 < q0 || q1 > nt) {
    fail(at("query_start", s + 1), "= " + std::to_string(q1) + " must lie in [query_start[" +
                                       std::to_string(s) + "]=" + std::to_string(q0) + ", " +
                                       std::to_string(nt) + "]");
  }
  const int64_t n_new = q1 - q0;
  const int64_t len = b.seq_lens[s];
  if (len < n_new || len > lim.context || len > mb * bs) {
    fail(at("seq_lens", s), "= " + std::to_string(len) + " must lie in [new tokens " +
                                std::to_string(n_new) + ", min(context " +
                                std::to_string(lim.context) + ", max_blocks_per_seq*block_size " +
                                std::to_string(mb * bs) + ")]");
  }
  const int32_t* table = b.block_tables + s * mb;
  const int64_t used_blocks = bs > 0 ? (len + bs - 1) / bs : 0;
  for (int64_t j = 0; j < used_blocks; ++j) {
    if (table[j] < 0 || table[j] >= lim.num_blocks) {
      fail(at2("block_tables", s, j),
           "= " + std::to_string(table[j]) +
               " is outside [0, num_blocks=" + std::to_string(lim.num_blocks) + ") but seq_lens[" +
               std::to_string(s) + "]=" + std::to_string(len) + " needs it");
    }
  }
  check_new_tokens(b, lim, s, q0, q1, len, table);
}

void check_logits_indices(const plinth_batch& b) {
  const int64_t nt = b.num_tokens;
  for (int64_t i = 0; i < static_cast<int64_t>(b.num_logits); ++i) {
    const int32_t v = b.logits_indices[i];
    if (v < 0 || v >= nt || (i > 0 && v <= b.logits_indices[i - 1])) {
      fail(at("logits_indices", i), "= " + std::to_string(v) + " must be < num_tokens=" +
                                        std::to_string(nt) + " and strictly ascending");
    }
  }
}

}  // namespace

void validate_batch(const plinth_batch& b, const BatchLimits& lim) {
  check_fields(b, lim);
  const int64_t ns = b.num_seqs;
  for (int64_t s = 0; s < ns; ++s) check_sequence(b, lim, s);
  check_logits_indices(b);
}

}  // namespace plinth::cpu
