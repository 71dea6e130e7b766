#include "scheduler.hpp"

#include <algorithm>
#include <stdexcept>
#include <string>
#include <unordered_map>

namespace plinth::scheduler_continuous {

namespace {
/// Default fraction of blocks kept free at admission when the kv_cache publishes no watermark.
constexpr double kDefaultWatermark = 0.01;
std::string seq_name(plinth_seq_id seq) {
  return "sequence " + std::to_string(seq);
}
}  // namespace

Scheduler::Scheduler(const SchedulerConfig& config, plinth_kv_cache_ref kv, sdk::Host host,
                     const PrefixClient& prefix)
    : config_(config), kv_(kv), host_(std::move(host)), prefix_(prefix) {
  plinth_kv_info info = kv_.info();
  block_size_ = info.block_size;
  num_blocks_ = info.num_blocks;
  watermark_blocks_ = kv_.watermark_blocks(kDefaultWatermark);
  // Running, waiting and preemptions reach /metrics through get_stats (the host's
  // plinth_num_requests_*, plinth_num_preemptions_total), so they are not exported twice here.
  if (prefix_.enabled()) {
    m_prefix_queries_ =
        host_.metric("plinth_prefix_cache_queries_total",
                     "tokens looked up in the prefix cache at admission", PLINTH_METRIC_COUNTER);
    m_prefix_hits_ = host_.metric("plinth_prefix_cache_hits_total",
                                  "of the tokens looked up at admission, those found cached",
                                  PLINTH_METRIC_COUNTER);
    m_prefix_hit_rate_ = host_.metric(
        "plinth_prefix_cache_hit_rate",
        "prefix cache hits / queries (tokens) at admission, since start", PLINTH_METRIC_GAUGE);
  }
  m_batched_ = host_.metric("plinth_sched_batched_tokens", "tokens scheduled in the last step",
                            PLINTH_METRIC_GAUGE);
}

bool Scheduler::before(const SeqState& a, const SeqState& b) const {
  if (config_.policy == Policy::kPriority && a.priority != b.priority) {
    return a.priority < b.priority;
  }
  if (a.arrival_time != b.arrival_time) return a.arrival_time < b.arrival_time;
  return a.order < b.order;
}

bool Scheduler::worse(const SeqState& a, const SeqState& b) const {
  return before(b, a);
}

void Scheduler::add(const plinth_sched_request& req) {
  if (known_.count(req.seq) != 0) {
    throw std::invalid_argument("scheduler_continuous: " + seq_name(req.seq) +
                                " was added already; use a new sequence id");
  }
  if (req.num_prompt_tokens == 0) {
    throw std::invalid_argument("scheduler_continuous: " + seq_name(req.seq) +
                                " has num_prompt_tokens = 0; a prompt needs at least 1 token");
  }
  const uint64_t total = uint64_t{req.num_prompt_tokens} + req.max_tokens;
  const uint64_t blocks = (total + block_size_ - 1) / block_size_;
  if (blocks > num_blocks_) {
    throw std::invalid_argument(
        "scheduler_continuous: " + seq_name(req.seq) +
        " can never fit the KV pool: " + std::to_string(req.num_prompt_tokens) + " prompt + " +
        std::to_string(req.max_tokens) + " max_tokens = " + std::to_string(total) +
        " tokens need " + std::to_string(blocks) + " blocks of " + std::to_string(block_size_) +
        ", the pool has " + std::to_string(num_blocks_) +
        "; lower max_tokens or set the kv_cache's num_blocks >= " + std::to_string(blocks) +
        " (with block_size " + std::to_string(block_size_) + ")");
  }
  if (!config_.enable_chunked_prefill && total > config_.max_num_batched_tokens) {
    throw std::invalid_argument(
        "scheduler_continuous: " + seq_name(req.seq) + " has " + std::to_string(total) +
        " tokens (prompt + max_tokens), more than max_num_batched_tokens = " +
        std::to_string(config_.max_num_batched_tokens) +
        " without chunked prefill (a preempted sequence recomputes them in one step); enable "
        "enable_chunked_prefill or raise max_num_batched_tokens");
  }
  SeqState s;
  s.seq = req.seq;
  s.num_prompt_tokens = req.num_prompt_tokens;
  s.max_tokens = req.max_tokens;
  s.num_tokens = req.num_prompt_tokens;
  s.priority = req.priority;
  s.arrival_time = req.arrival_time;
  s.order = next_order_++;
  s.parent = PLINTH_HAS_FIELD(&req, plinth_sched_request, parent) ? req.parent : 0;
  known_.insert(req.seq);
  enqueue_waiting(s, false);
}

void Scheduler::enqueue_waiting(SeqState s, bool preempted) {
  s.scheduled_new = 0;
  if (preempted && config_.policy == Policy::kFcfs) {
    waiting_.push_front(s);
    return;
  }
  // Sorted insert from the back: new requests usually arrive last. A preempted sequence goes
  // ahead of every waiting one of equal rank.
  auto it = waiting_.end();
  while (it != waiting_.begin() && (before(s, *(it - 1)) || (preempted && !before(*(it - 1), s)))) {
    --it;
  }
  waiting_.insert(it, s);
}

void Scheduler::abort_seq(plinth_seq_id seq) {
  if (known_.erase(seq) == 0) return;
  kv_.free_seq(seq);
  auto r = std::find_if(running_.begin(), running_.end(),
                        [&](const SeqState& s) { return s.seq == seq; });
  if (r != running_.end()) {
    drop_prefix_lock(*r);
    running_.erase(r);
  } else {
    auto w = std::find_if(waiting_.begin(), waiting_.end(),
                          [&](const SeqState& s) { return s.seq == seq; });
    if (w != waiting_.end()) waiting_.erase(w);
  }
}

void Scheduler::preempt(size_t index) {
  SeqState s = running_[index];
  running_.erase(running_.begin() + static_cast<std::ptrdiff_t>(index));
  kv_.free_seq(s.seq);
  drop_prefix_lock(s);
  s.num_computed = 0;
  ++s.num_preemptions;
  ++num_preemptions_;
  out_preempted_.push_back(s.seq);
  enqueue_waiting(s, true);
}

uint32_t Scheduler::chunk(const SeqState& s, uint32_t budget) const {
  uint32_t n = s.num_tokens - s.num_computed;
  if (config_.enable_chunked_prefill) {
    n = std::min(n, budget);
    if (config_.long_prefill_token_threshold > 0) {
      n = std::min(n, config_.long_prefill_token_threshold);
    }
    return n;
  }
  return n <= budget ? n : 0;
}

void Scheduler::record(const SeqState& s, uint32_t num_new) {
  out_seqs_.push_back(s.seq);
  out_computed_.push_back(s.num_computed);
  out_new_.push_back(num_new);
}

uint32_t Scheduler::tokens_this_step(const SeqState& s, uint32_t budget, uint32_t lookahead,
                                     bool& decode) const {
  const uint32_t remaining = s.num_tokens - s.num_computed;
  decode = false;
  if (remaining == 0) return 0;  // nothing to compute until the host reports a new token
  decode = remaining == 1 && s.num_computed >= s.num_prompt_tokens;
  if (!decode) return chunk(s, budget);  // 0: the remainder does not fit (no chunking)
  // 1 decode token + draft slots, never past the request's own end (prompt + max_tokens, which
  // add() checked fits the pool): draft slots never make a sequence unschedulable.
  const uint32_t end = s.num_prompt_tokens + s.max_tokens;
  const uint32_t cap = end > s.num_computed ? end - s.num_computed : 1;
  return std::min({1 + lookahead, budget, std::max(cap, 1u)});
}

bool Scheduler::allocate_or_preempt(size_t i, uint32_t& n, bool decode) {
  while (true) {
    if (kv_.allocate(running_[i].seq, running_[i].num_computed + n, out_copies_)) return true;
    if (decode && n > 1) {
      n = 1;  // draft slots are optional: drop them before evicting or preempting anyone
      continue;
    }
    // Cached blocks nobody holds go before any running sequence is preempted.
    const uint32_t need = kv_.blocks_needed(running_[i].seq, running_[i].num_computed + n);
    if (prefix_.evict(need) > 0) continue;
    size_t victim = i;
    for (size_t v = i + 1; v < running_.size(); ++v) {
      if (worse(running_[v], running_[victim])) victim = v;
    }
    preempt(victim);
    if (victim == i) return false;
  }
}

plinth_sched_output Scheduler::output(uint32_t budget) {
  plinth_sched_output out{};
  out.struct_size = sizeof(out);
  out.num_scheduled = static_cast<uint32_t>(out_seqs_.size());
  out.seqs = out_seqs_.data();
  out.num_computed = out_computed_.data();
  out.num_new_tokens = out_new_.data();
  out.num_batched_tokens = config_.max_num_batched_tokens - budget;
  out.num_preempted = static_cast<uint32_t>(out_preempted_.size());
  out.preempted = out_preempted_.data();
  out.num_copies = static_cast<uint32_t>(out_copies_.size());
  out.copies = out_copies_.data();
  host_.set(m_batched_, out.num_batched_tokens);
  return out;
}

plinth_sched_output Scheduler::schedule(const plinth_sched_step& step) {
  out_seqs_.clear();
  out_computed_.clear();
  out_new_.clear();
  out_preempted_.clear();
  out_copies_.clear();
  uint32_t budget = config_.max_num_batched_tokens;
  for (SeqState& s : running_) s.scheduled_new = 0;

  // 1. Running sequences: the next chunk or decode token of each, preempting when blocks run out.
  size_t i = 0;
  while (i < running_.size() && budget > 0) {
    bool decode = false;
    uint32_t n = tokens_this_step(running_[i], budget, step.num_lookahead_tokens, decode);
    if (n == 0) {
      ++i;
      continue;
    }
    if (!allocate_or_preempt(i, n, decode)) continue;  // running_[i] is now the next sequence
    running_[i].scheduled_new = n;
    record(running_[i], n);
    budget -= n;
    ++i;
  }

  // 2. Waiting sequences, in queue order, while budgets and free blocks allow.
  if (out_preempted_.empty()) admit_waiting(budget);
  return output(budget);
}

void Scheduler::update(std::span<const plinth_sched_result> results) {
  std::unordered_map<plinth_seq_id, size_t> index;
  for (size_t i = 0; i < running_.size(); ++i) index.emplace(running_[i].seq, i);
  // Validate everything first so that a bad report changes nothing.
  std::unordered_set<plinth_seq_id> seen;
  for (const plinth_sched_result& r : results) {
    if (known_.count(r.seq) == 0) continue;  // aborted since schedule
    auto it = index.find(r.seq);
    if (it == index.end() || running_[it->second].scheduled_new == 0) {
      throw std::invalid_argument("scheduler_continuous: update: " + seq_name(r.seq) +
                                  " was not scheduled in the last step");
    }
    if (!seen.insert(r.seq).second) {
      throw std::invalid_argument("scheduler_continuous: update: " + seq_name(r.seq) +
                                  " is reported twice");
    }
    const SeqState& s = running_[it->second];
    const uint32_t hi = s.num_computed + s.scheduled_new;
    if (r.num_computed < s.num_computed || r.num_computed > hi || r.num_tokens < r.num_computed) {
      throw std::invalid_argument("scheduler_continuous: update: " + seq_name(r.seq) +
                                  " reports num_computed = " + std::to_string(r.num_computed) +
                                  ", num_tokens = " + std::to_string(r.num_tokens) +
                                  "; expected num_computed in " + std::to_string(s.num_computed) +
                                  ".." + std::to_string(hi) + " and num_tokens >= num_computed");
    }
  }
  std::vector<plinth_seq_id> finished;
  for (const plinth_sched_result& r : results) {
    if (known_.count(r.seq) == 0) continue;
    SeqState& s = running_[index.at(r.seq)];
    const uint32_t allocated = s.num_computed + s.scheduled_new;
    s.num_computed = r.num_computed;
    s.num_tokens = r.num_tokens;
    s.scheduled_new = 0;
    if (r.num_computed < allocated && r.finished == 0) {
      kv_.truncate(r.seq, r.num_computed);  // rejected draft tokens
    }
    cache_full_blocks(s);  // after truncation: only accepted tokens are cached
    if (r.finished != 0) {
      drop_prefix_lock(s);
      finished.push_back(r.seq);
    }
  }
  for (plinth_seq_id seq : finished) {
    kv_.free_seq(seq);
    known_.erase(seq);
  }
  if (!finished.empty()) {
    std::unordered_set<plinth_seq_id> done(finished.begin(), finished.end());
    std::erase_if(running_, [&](const SeqState& s) { return done.count(s.seq) != 0; });
  }
}

plinth_sched_stats Scheduler::stats() const {
  plinth_sched_stats s{};
  s.struct_size = sizeof(s);
  s.num_running = static_cast<uint32_t>(running_.size());
  s.num_waiting = static_cast<uint32_t>(waiting_.size());
  s.num_preemptions = num_preemptions_;
  return s;
}

}  // namespace plinth::scheduler_continuous
