#include "padded_batch.hpp"

#include <algorithm>
#include <cstring>
#include <stdexcept>

namespace plinth::cuda_graph {

std::optional<uint32_t> choose_capture_size(std::span<const uint32_t> sizes, uint32_t num_seqs) {
  if (num_seqs == 0) return std::nullopt;
  auto it = std::lower_bound(sizes.begin(), sizes.end(), num_seqs);
  if (it == sizes.end()) return std::nullopt;
  return *it;
}

std::string eager_reason(const plinth_batch& b, std::span<const uint32_t> sizes,
                         const StaticShape& shape) {
  if (b.num_seqs == 0) return "empty batch";
  if (b.num_tokens != b.num_seqs) {
    return "not decode-only: " + std::to_string(b.num_tokens) + " tokens for " +
           std::to_string(b.num_seqs) + " sequences";
  }
  if (b.query_start == nullptr) return "no query_start";
  for (uint32_t i = 0; i <= b.num_seqs; ++i) {
    if (b.query_start[i] != static_cast<int32_t>(i)) {
      return "not decode-only: sequence " + std::to_string(i) + " does not have one new token";
    }
  }
  if (b.num_logits != b.num_seqs || (b.num_logits > 0 && b.logits_indices == nullptr)) {
    return "logits wanted for " + std::to_string(b.num_logits) + " of " +
           std::to_string(b.num_seqs) + " sequences";
  }
  for (uint32_t i = 0; i < b.num_logits; ++i) {
    if (b.logits_indices[i] != static_cast<int32_t>(i)) return "logits rows out of order";
  }
  if (!choose_capture_size(sizes, b.num_seqs)) {
    return std::to_string(b.num_seqs) + " sequences, above the largest capture size " +
           (sizes.empty() ? std::string("(none)") : std::to_string(sizes.back()));
  }
  if (b.max_blocks_per_seq > shape.max_blocks_per_seq) {
    return "block table " + std::to_string(b.max_blocks_per_seq) +
           " blocks wide, wider than the captured " + std::to_string(shape.max_blocks_per_seq);
  }
  if (shape.block_size != 0 && b.block_size != shape.block_size) {
    return "block size " + std::to_string(b.block_size) + " differs from the captured " +
           std::to_string(shape.block_size);
  }
  return "";
}

void PaddedBatch::point_arrays() {
  batch_.token_ids = tokens_.data();
  batch_.positions = positions_.data();
  batch_.query_start = query_start_.data();
  batch_.seq_lens = seq_lens_.data();
  batch_.block_tables = block_tables_.data();
  batch_.slot_mapping = slots_.data();
  batch_.logits_indices = logits_indices_.data();
}

const plinth_batch& PaddedBatch::build(const plinth_batch& real, uint32_t size,
                                       uint32_t max_blocks_per_seq) {
  if (size < real.num_seqs) {
    throw std::invalid_argument("cuda_graph: capture size " + std::to_string(size) +
                                " is smaller than the batch's " + std::to_string(real.num_seqs) +
                                " sequences");
  }
  if (real.max_blocks_per_seq > max_blocks_per_seq) {
    throw std::invalid_argument(
        "cuda_graph: block table " + std::to_string(real.max_blocks_per_seq) +
        " wide does not fit the captured " + std::to_string(max_blocks_per_seq));
  }
  // The whole struct as the caller wrote it, then the arrays.
  batch_ = plinth_batch{};
  const size_t n = std::min<size_t>(real.struct_size, sizeof(plinth_batch));
  std::memcpy(static_cast<void*>(&batch_), &real, n);
  batch_.struct_size = static_cast<uint32_t>(n);

  const uint32_t ns = real.num_seqs;
  const uint32_t w = max_blocks_per_seq;
  tokens_.assign(size, 0);
  positions_.assign(size, 0);
  seq_lens_.assign(size, 1);
  slots_.assign(size, -1);
  block_tables_.assign(static_cast<size_t>(size) * w, -1);
  query_start_.resize(size + 1);
  logits_indices_.resize(size);
  for (uint32_t i = 0; i <= size; ++i) query_start_[i] = static_cast<int32_t>(i);
  for (uint32_t i = 0; i < size; ++i) logits_indices_[i] = static_cast<int32_t>(i);
  std::copy_n(real.token_ids, ns, tokens_.begin());
  std::copy_n(real.positions, ns, positions_.begin());
  std::copy_n(real.seq_lens, ns, seq_lens_.begin());
  std::copy_n(real.slot_mapping, ns, slots_.begin());
  for (uint32_t s = 0; s < ns; ++s) {
    std::copy_n(real.block_tables + static_cast<size_t>(s) * real.max_blocks_per_seq,
                real.max_blocks_per_seq, block_tables_.begin() + static_cast<size_t>(s) * w);
  }
  batch_.num_tokens = size;
  batch_.num_seqs = size;
  batch_.max_blocks_per_seq = w;
  batch_.num_logits = real.num_logits;
  point_arrays();
  return batch_;
}

const plinth_batch& PaddedBatch::build_dummy(uint32_t size, uint32_t max_blocks_per_seq,
                                             uint32_t block_size) {
  plinth_batch empty{};
  empty.struct_size = sizeof(plinth_batch);
  empty.block_size = block_size;
  const int32_t zero = 0;
  empty.query_start = &zero;
  return build(empty, size, max_blocks_per_seq);
}

}  // namespace plinth::cuda_graph
