#include <algorithm>

#include "model_proposer.hpp"

namespace plinth::spec_decode {

void FlatBatch::clear(uint32_t block_size) {
  block_size_ = block_size;
  max_blocks_ = 0;
  ids_.clear();
  pos_.clear();
  qs_.assign(1, 0);
  lens_.clear();
  slots_.clear();
  logits_.clear();
  tables_.clear();
}

void FlatBatch::add(std::span<const int32_t> tokens, uint32_t start,
                    std::span<const int32_t> block_table) {
  for (size_t i = 0; i < tokens.size(); ++i) {
    const uint32_t p = start + static_cast<uint32_t>(i);
    ids_.push_back(tokens[i]);
    pos_.push_back(static_cast<int32_t>(p));
    slots_.push_back(block_table[p / block_size_] * static_cast<int32_t>(block_size_) +
                     static_cast<int32_t>(p % block_size_));
  }
  qs_.push_back(static_cast<int32_t>(ids_.size()));
  lens_.push_back(static_cast<int32_t>(start + tokens.size()));
  logits_.push_back(static_cast<int32_t>(ids_.size()) - 1);
  tables_.emplace_back(block_table.begin(), block_table.end());
  max_blocks_ = std::max(max_blocks_, block_table.size());
}

const plinth_batch& FlatBatch::view() {
  flat_tables_.assign(tables_.size() * max_blocks_, -1);
  for (size_t i = 0; i < tables_.size(); ++i) {
    std::copy(tables_[i].begin(), tables_[i].end(), flat_tables_.begin() + i * max_blocks_);
  }
  batch_ = plinth_batch{};
  batch_.struct_size = sizeof(batch_);
  batch_.num_tokens = static_cast<uint32_t>(ids_.size());
  batch_.num_seqs = static_cast<uint32_t>(lens_.size());
  batch_.token_ids = ids_.data();
  batch_.positions = pos_.data();
  batch_.query_start = qs_.data();
  batch_.seq_lens = lens_.data();
  batch_.block_tables = flat_tables_.data();
  batch_.max_blocks_per_seq = static_cast<uint32_t>(max_blocks_);
  batch_.block_size = block_size_;
  batch_.slot_mapping = slots_.data();
  batch_.num_logits = static_cast<uint32_t>(logits_.size());
  batch_.logits_indices = logits_.data();
  return batch_;
}

std::vector<int32_t> argmax_rows(const plinth_forward_output& out) {
  std::vector<int32_t> ids(out.num_logits);
  for (uint32_t r = 0; r < out.num_logits; ++r) {
    const float* row = out.logits + size_t{r} * out.vocab_size;
    ids[r] = static_cast<int32_t>(std::max_element(row, row + out.vocab_size) - row);
  }
  return ids;
}

}  // namespace plinth::spec_decode
