#include <plinth/plugin.hpp>

#include <algorithm>
#include <cstring>
#include <stdexcept>
#include <string>

#include "model_proposer.hpp"

namespace plinth::spec_decode {

DraftModelProposer::DraftModelProposer(plinth_backend_ref draft,
                                       const plinth_model_desc& draft_model,
                                       const plinth_model_desc& target_model, uint32_t kv_tokens)
    : draft_(draft), num_layers_(draft_model.config.n_layers) {
  if (draft_model.config.vocab_size != target_model.config.vocab_size) {
    throw std::invalid_argument(
        "spec_decode: the draft model " + std::string(draft_model.path ? draft_model.path : "?") +
        " has a vocabulary of " + std::to_string(draft_model.config.vocab_size) +
        " tokens and the target " + std::to_string(target_model.config.vocab_size) +
        ": use a draft model with the target's tokenizer (e.g. `plinth draft-model`)");
  }
  const uint32_t num_blocks = (kv_tokens + kBlockSize - 1) / kBlockSize;
  plinth_error err = sdk::new_error();
  sdk::check_call(draft_.vtable->allocate_kv(draft_.instance, num_blocks, kBlockSize, &err), err,
                  "spec_decode: draft backend allocate_kv (lower config.draft_kv_tokens)");
  free_.reserve(num_blocks);
  for (uint32_t b = num_blocks; b > 0; --b) free_.push_back(static_cast<int32_t>(b - 1));
}

bool DraftModelProposer::reserve(SeqState& s, size_t tokens, std::span<const DraftJob> busy) {
  const size_t need = (tokens + kBlockSize - 1) / kBlockSize;
  while (s.blocks.size() < need) {
    if (free_.empty()) {
      // Evict the least recently used sequence that is not drafting this step.
      auto victim = seqs_.end();
      for (auto it = seqs_.begin(); it != seqs_.end(); ++it) {
        const bool in_use = std::any_of(busy.begin(), busy.end(),
                                        [&](const DraftJob& j) { return j.seq == it->first; });
        if (in_use || it->second.blocks.empty()) continue;
        if (victim == seqs_.end() || it->second.last_used < victim->second.last_used) victim = it;
      }
      if (victim == seqs_.end()) return false;
      free_.insert(free_.end(), victim->second.blocks.begin(), victim->second.blocks.end());
      victim->second.blocks.clear();
      victim->second.cached.clear();
      continue;
    }
    s.blocks.push_back(free_.back());
    free_.pop_back();
  }
  return true;
}

void DraftModelProposer::propose(std::span<const DraftJob> jobs,
                                 std::vector<std::vector<int32_t>>& drafts) {
  drafts.assign(jobs.size(), {});
  ++clock_;
  // 1. Catch up: each sequence's draft KV is valid for the longest common prefix of what it
  //    computed and the tokens now (rejected drafts drop out); compute the rest up to the last
  //    token, whose logits give the first draft.
  std::vector<size_t> active;
  batch_.clear(kBlockSize);
  for (size_t i = 0; i < jobs.size(); ++i) {
    const DraftJob& job = jobs[i];
    SeqState& s = seqs_[job.seq];
    s.last_used = clock_;
    const size_t len = job.tokens.size();
    size_t c =
        std::mismatch(s.cached.begin(), s.cached.end(), job.tokens.begin(),
                      job.tokens.begin() + static_cast<ptrdiff_t>(std::min(s.cached.size(), len)))
            .first -
        s.cached.begin();
    c = std::min(c, len - 1);
    s.cached.resize(c);
    if (job.k == 0 || !reserve(s, len + job.k - 1, jobs)) continue;
    batch_.add(job.tokens.subspan(c), static_cast<uint32_t>(c), s.blocks);
    active.push_back(i);
  }
  if (active.empty()) return;
  plinth_error err = sdk::new_error();
  plinth_forward_output out{};
  out.struct_size = sizeof(out);
  sdk::check_call(draft_.vtable->forward(draft_.instance, &batch_.view(), &out, &err), err,
                  "spec_decode: draft backend forward");
  std::vector<int32_t> next = argmax_rows(out);
  for (size_t r = 0; r < active.size(); ++r) {
    const DraftJob& job = jobs[active[r]];
    SeqState& s = seqs_[job.seq];
    s.cached.assign(job.tokens.begin(), job.tokens.end());
    drafts[active[r]].push_back(next[r]);
  }
  // 2. One token per draft position after the first.
  for (uint32_t j = 1;; ++j) {
    batch_.clear(kBlockSize);
    std::vector<size_t> rows;
    for (size_t i : active) {
      if (jobs[i].k <= j) continue;
      SeqState& s = seqs_[jobs[i].seq];
      const int32_t token = drafts[i][j - 1];
      batch_.add({&token, 1}, static_cast<uint32_t>(s.cached.size()), s.blocks);
      s.cached.push_back(token);
      rows.push_back(i);
    }
    if (rows.empty()) break;
    out = plinth_forward_output{};
    out.struct_size = sizeof(out);
    sdk::check_call(draft_.vtable->forward(draft_.instance, &batch_.view(), &out, &err), err,
                    "spec_decode: draft backend forward");
    next = argmax_rows(out);
    for (size_t r = 0; r < rows.size(); ++r) drafts[rows[r]].push_back(next[r]);
  }
}

void DraftModelProposer::release(plinth_seq_id seq) {
  auto it = seqs_.find(seq);
  if (it == seqs_.end()) return;
  free_.insert(free_.end(), it->second.blocks.begin(), it->second.blocks.end());
  seqs_.erase(it);
}

}  // namespace plinth::spec_decode
