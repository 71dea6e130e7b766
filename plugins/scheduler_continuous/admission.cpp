// scheduler_continuous — admission of waiting sequences and the prefix-cache bookkeeping of
// running ones (the Scheduler members declared in scheduler.hpp under "admission.cpp").
//
// Prefix caching follows SGLang's RadixAttention (Zheng et al., 2024) as vLLM v1 schedules it:
// at admission the longest cached prefix of all tokens but the last is attached (the last token
// is always computed, so the next token has logits: a prompt of exactly k blocks reuses k - 1);
// the match's lock is held while the sequence runs, so that evictable blocks are exactly the
// cached blocks no running sequence reads; each block is inserted as soon as it is computed and
// the lock moves to the longer path.
#include <algorithm>
#include <string>

#include "scheduler.hpp"

namespace plinth::scheduler_continuous {

const SeqState* Scheduler::find_running(plinth_seq_id seq) const {
  for (const SeqState& s : running_) {
    if (s.seq == seq) return &s;
  }
  return nullptr;
}

bool Scheduler::is_waiting(plinth_seq_id seq) const {
  return std::any_of(waiting_.begin(), waiting_.end(),
                     [&](const SeqState& s) { return s.seq == seq; });
}

void Scheduler::drop_prefix_lock(SeqState& s) {
  prefix_.release(s.prefix_handle);
  s.prefix_handle = 0;
  s.num_inserted = 0;
}

void Scheduler::cache_full_blocks(SeqState& s) {
  if (!prefix_.enabled()) return;
  const uint32_t full = s.num_computed / block_size_ * block_size_;
  if (full <= s.num_inserted) return;
  std::vector<int32_t> table = kv_.block_table(s.seq);
  const uint32_t num_full = full / block_size_;
  if (table.size() < num_full) return;  // the kv_cache disagrees; nothing safe to insert
  prefix_.insert(s.seq, full, std::span<const int32_t>(table.data(), num_full));
  // Lock the longer path (it may hold another sequence's equal blocks), then unlock the old one.
  PrefixMatch m = prefix_.match(s.seq, full);
  prefix_.release(s.prefix_handle);
  s.prefix_handle = m.handle;
  s.num_inserted = full;
}

void Scheduler::order_by_prefix() {
  if (!prefix_.enabled() || waiting_.size() > config_.lpm_max_waiting) return;  // FCFS then
  for (SeqState& w : waiting_) {
    PrefixMatch m = prefix_.match(w.seq, w.num_tokens - 1);
    prefix_.release(m.handle);
    w.match_hint = m.num_tokens;
  }
  // Resumed (preempted) sequences stay first; then the longest match; then arrival.
  std::sort(waiting_.begin(), waiting_.end(), [&](const SeqState& a, const SeqState& b) {
    if ((a.num_preemptions > 0) != (b.num_preemptions > 0)) return a.num_preemptions > 0;
    if (a.match_hint != b.match_hint) return a.match_hint > b.match_hint;
    return before(a, b);
  });
}

void Scheduler::admit_waiting(uint32_t& budget) {
  if (config_.policy == Policy::kLongestPrefixFirst) order_by_prefix();
  size_t wi = 0;
  while (wi < waiting_.size() && running_.size() < config_.max_num_seqs && budget > 0) {
    uint32_t n = 0;
    Admit a = try_admit(waiting_[wi], budget, n);
    if (a == Admit::kStop) break;
    if (a == Admit::kSkip) {
      ++wi;
      continue;
    }
    running_.push_back(waiting_[wi]);
    waiting_.erase(waiting_.begin() + static_cast<std::ptrdiff_t>(wi));
    running_.back().scheduled_new = n;
    record(running_.back(), n);
    budget -= n;
  }
}

Scheduler::Admit Scheduler::try_fork(SeqState& w, const SeqState& parent, uint32_t& num_new) {
  // The child shares the parent's blocks, keeps its first P - 1 tokens and computes the last
  // prompt token itself (copy-on-write of a shared last block), which gives it its own logits.
  const uint32_t keep = w.num_prompt_tokens - 1;
  kv_.fork(parent.seq, w.seq);
  kv_.truncate(w.seq, keep);
  if (!kv_.allocate(w.seq, keep + 1, out_copies_)) {
    kv_.free_seq(w.seq);
    return Admit::kStop;
  }
  w.num_computed = keep;
  num_new = w.num_tokens - keep;
  return Admit::kAdmitted;
}

Scheduler::Admit Scheduler::try_admit(SeqState& w, uint32_t budget, uint32_t& num_new) {
  // n > 1: wait for the parent's prompt KV, then fork it; compute normally once it is gone.
  if (w.parent != 0 && w.num_preemptions == 0 && w.num_computed == 0) {
    const SeqState* p = find_running(w.parent);
    if (p != nullptr && p->num_computed + 1 >= w.num_prompt_tokens &&
        w.num_tokens == w.num_prompt_tokens) {
      return try_fork(w, *p, num_new);
    }
    if (p != nullptr || is_waiting(w.parent)) return Admit::kSkip;
    w.parent = 0;
  }

  PrefixMatch m;
  if (w.num_computed == 0) m = prefix_.match(w.seq, w.num_tokens - 1);
  const uint32_t cached = m.num_tokens;
  const uint32_t saved_computed = w.num_computed;
  w.num_computed = std::max(w.num_computed, cached);
  const uint32_t n = chunk(w, budget);
  auto give_up = [&] {
    w.num_computed = saved_computed;
    prefix_.release(m.handle);
    return Admit::kStop;
  };
  if (n == 0) return give_up();

  // Blocks beyond the attached ones; cached blocks nobody holds count as free.
  const uint32_t total = (w.num_computed + n + block_size_ - 1) / block_size_;
  const uint32_t need = m.num_tokens > 0 ? total - static_cast<uint32_t>(m.blocks.size())
                                         : kv_.blocks_needed(w.seq, w.num_computed + n);
  const uint32_t reserve = running_.empty() ? 0 : watermark_blocks_;
  const uint64_t free_now = kv_.stats().num_free_blocks;
  if (uint64_t{need} + reserve > free_now + prefix_.evictable_blocks()) return give_up();
  if (uint64_t{need} + reserve > free_now) {
    prefix_.evict(static_cast<uint32_t>(uint64_t{need} + reserve - free_now));
  }
  if (cached > 0) kv_.attach(w.seq, m.blocks, cached);
  if (!kv_.allocate(w.seq, w.num_computed + n, out_copies_)) {
    if (cached > 0) kv_.free_seq(w.seq);
    return give_up();
  }
  if (prefix_.enabled()) {
    prefix_queried_ += w.num_tokens;
    prefix_hits_ += cached;
    host_.add(m_prefix_queries_, w.num_tokens);
    host_.add(m_prefix_hits_, cached);
    host_.set(m_prefix_hit_rate_, static_cast<double>(prefix_hits_) /
                                      static_cast<double>(std::max<uint64_t>(prefix_queried_, 1)));
  }
  w.prefix_handle = m.handle;
  w.num_inserted = cached;
  num_new = n;
  return Admit::kAdmitted;
}

}  // namespace plinth::scheduler_continuous
