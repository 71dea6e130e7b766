#include "engine/batch_builder.hpp"

#include <algorithm>
#include <stdexcept>
#include <string>

#include "engine/sequence.hpp"

namespace plinth {

const plinth_batch& BatchBuilder::build(std::span<const Entry> entries, uint32_t block_size) {
  token_ids_.clear();
  positions_.clear();
  query_start_.assign(1, 0);
  seq_lens_.clear();
  slots_.clear();
  logits_indices_.clear();
  logits_owner_.clear();

  size_t max_blocks = 0;
  for (const Entry& e : entries) max_blocks = std::max(max_blocks, e.block_table.size());
  block_tables_.assign(entries.size() * max_blocks, -1);
  // ABI 1.3: argmax ids suffice when every logits row is a plain greedy pick (no drafts to verify).
  bool argmax_only = true;

  for (size_t i = 0; i < entries.size(); ++i) {
    const Entry& e = entries[i];
    const std::vector<int32_t>& tokens = e.seq->tokens();
    const uint32_t end = e.num_computed + e.num_new;
    const size_t known = tokens.size() + e.drafts.size();
    if (end > known || static_cast<size_t>(end) > e.block_table.size() * block_size) {
      throw std::logic_error("batch: sequence " + std::to_string(e.seq->id()) + " scheduled to " +
                             std::to_string(end) + " tokens but holds " + std::to_string(known) +
                             " tokens (with drafts) and " + std::to_string(e.block_table.size()) +
                             " blocks");
    }
    std::copy(e.block_table.begin(), e.block_table.end(), block_tables_.begin() + i * max_blocks);
    for (uint32_t pos = e.num_computed; pos < end; ++pos) {
      token_ids_.push_back(pos < tokens.size() ? tokens[pos] : e.drafts[pos - tokens.size()]);
      positions_.push_back(static_cast<int32_t>(pos));
      slots_.push_back(e.block_table[pos / block_size] * static_cast<int32_t>(block_size) +
                       static_cast<int32_t>(pos % block_size));
    }
    query_start_.push_back(static_cast<int32_t>(token_ids_.size()));
    seq_lens_.push_back(static_cast<int32_t>(end));
    if (end == known) {  // the last token and each draft: 1 + drafts.size() rows
      argmax_only = argmax_only && e.drafts.empty() && e.seq->argmax_suffices();
      for (size_t r = e.drafts.size() + 1; r > 0; --r) {
        logits_indices_.push_back(static_cast<int32_t>(token_ids_.size() - r));
        logits_owner_.push_back(static_cast<uint32_t>(i));
      }
    }
  }

  batch_ = plinth_batch{};
  batch_.struct_size = sizeof(plinth_batch);
  batch_.num_tokens = static_cast<uint32_t>(token_ids_.size());
  batch_.num_seqs = static_cast<uint32_t>(entries.size());
  batch_.token_ids = token_ids_.data();
  batch_.positions = positions_.data();
  batch_.query_start = query_start_.data();
  batch_.seq_lens = seq_lens_.data();
  batch_.block_tables = block_tables_.data();
  batch_.max_blocks_per_seq = static_cast<uint32_t>(max_blocks);
  batch_.block_size = block_size;
  batch_.slot_mapping = slots_.data();
  batch_.num_logits = static_cast<uint32_t>(logits_indices_.size());
  batch_.logits_indices = logits_indices_.data();
  batch_.argmax_only = argmax_only && !logits_indices_.empty() ? 1u : 0u;
  return batch_;
}

}  // namespace plinth
