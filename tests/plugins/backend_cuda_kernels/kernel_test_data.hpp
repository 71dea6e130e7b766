#pragma once
// What backend_cuda's kernel tests share (test_device_math.cpp, compiled by g++ everywhere, and
// test_kernels_gpu.cpp on a GPU): seeded random vectors and the one-sequence paged batch that
// backend_cpu's paged_attention reads as the reference.

#include <cstddef>
#include <cstdint>
#include <random>
#include <utility>
#include <vector>

#include "plinth/backend.h"

namespace plinth::cuda::test {

/// `n` draws of N(0, scale^2) from a generator seeded with `seed` (the same values on every run).
inline std::vector<float> randn(size_t n, uint32_t seed, float scale = 1.0f) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> d(0.0f, scale);
  std::vector<float> v(n);
  for (float& x : v) x = d(rng);
  return v;
}

/// The plinth_batch of one sequence: `seq_len` tokens (cached ones and new ones) in the blocks
/// `block_table` of `block_size` slots each, its new tokens at `positions`, written to `slots`
/// (token ids all 0, no logits rows). The batch points into this object: keep it alive.
class OneSequence {
 public:
  OneSequence(std::vector<int32_t> positions, std::vector<int32_t> slots,
              std::vector<int32_t> block_table, int32_t seq_len, uint32_t block_size)
      : positions_(std::move(positions)),
        slots_(std::move(slots)),
        table_(std::move(block_table)),
        tokens_(positions_.size(), 0),
        query_start_{0, static_cast<int32_t>(positions_.size())},
        seq_lens_{seq_len} {
    b_.struct_size = sizeof b_;
    b_.num_tokens = static_cast<uint32_t>(positions_.size());
    b_.num_seqs = 1;
    b_.token_ids = tokens_.data();
    b_.positions = positions_.data();
    b_.query_start = query_start_.data();
    b_.seq_lens = seq_lens_.data();
    b_.block_tables = table_.data();
    b_.max_blocks_per_seq = static_cast<uint32_t>(table_.size());
    b_.block_size = block_size;
    b_.slot_mapping = slots_.data();
  }
  OneSequence(const OneSequence&) = delete;
  OneSequence& operator=(const OneSequence&) = delete;

  const plinth_batch& batch() const { return b_; }

 private:
  std::vector<int32_t> positions_, slots_, table_, tokens_, query_start_, seq_lens_;
  plinth_batch b_{};
};

}  // namespace plinth::cuda::test
