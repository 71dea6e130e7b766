// cuda_graph — which batches a captured graph can run, which capture size they take, and the
// padded batch the graph replays. Pure C++ (no CUDA headers), unit-tested on the CPU.
//
// A graph is captured for a fixed shape: `size` sequences of one decode token each over block
// tables `max_blocks_per_seq` wide (the static buffers of plinth.cuda_stream/1, ext_cuda.h). A
// smaller decode batch is padded up to the next capture size with dummy rows (vLLM's CUDA-graph
// padding): token 0, position 0, seq_len 1, slot -1 (the backend writes no KV for it), a block
// table row of -1 (read as block 0: in bounds, value irrelevant), never sampled. Rows come after
// the real ones, so the first num_logits logits rows are the real sequences'.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "plinth/backend.h"

namespace plinth::cuda_graph {

/// The shape the static buffers (and every captured graph) were prepared for.
struct StaticShape {
  uint32_t max_seqs = 0;            ///< rows of the static buffers (the largest capture size)
  uint32_t max_blocks_per_seq = 0;  ///< block-table width
  uint32_t block_size = 0;          ///< tokens per KV block
};

/// The smallest capture size >= num_seqs in `sizes` (ascending), or nullopt when num_seqs is 0 or
/// above the largest.
std::optional<uint32_t> choose_capture_size(std::span<const uint32_t> sizes, uint32_t num_seqs);

/// Why `batch` cannot be replayed from a graph of `shape` with capture sizes `sizes`, or "" when
/// it can. It can when it is decode-only: num_seqs >= 1, exactly one new token per sequence
/// (num_tokens == num_seqs, query_start[i] == i), logits for every sequence in order
/// (num_logits == num_seqs, logits_indices[i] == i); num_seqs within the largest capture size;
/// batch.max_blocks_per_seq <= shape.max_blocks_per_seq; block_size == shape.block_size (when
/// shape.block_size is set). Reads only the arrays those rules need; never throws for a
/// well-formed batch.
std::string eager_reason(const plinth_batch& batch, std::span<const uint32_t> sizes,
                         const StaticShape& shape);

/// A decode batch padded to a capture size: owns its arrays; batch() points into them, valid
/// while this object lives and until the next build().
class PaddedBatch {
 public:
  /// Copies `real` (struct first, min(real.struct_size, sizeof) bytes, so fields this code does
  /// not name, such as argmax_only, travel unchanged), then replaces the arrays: num_tokens =
  /// num_seqs = `size`; rows [real.num_seqs, size) are dummy rows; block tables are re-laid at
  /// width `max_blocks_per_seq` (entries past a row's blocks -1); query_start = 0..size;
  /// logits_indices = 0..size-1 while num_logits keeps the real count. `real` must pass
  /// eager_reason; throws std::invalid_argument when size < real.num_seqs or the table is
  /// wider than max_blocks_per_seq.
  const plinth_batch& build(const plinth_batch& real, uint32_t size, uint32_t max_blocks_per_seq);

  /// A batch of `size` dummy rows only (num_logits 0), for capturing before any real batch.
  const plinth_batch& build_dummy(uint32_t size, uint32_t max_blocks_per_seq, uint32_t block_size);

  const plinth_batch& batch() const { return batch_; }

 private:
  void point_arrays();

  plinth_batch batch_{};
  std::vector<int32_t> tokens_, positions_, query_start_, seq_lens_, block_tables_, slots_,
      logits_indices_;
};

}  // namespace plinth::cuda_graph
