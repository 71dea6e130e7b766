#include "draft_policy.hpp"

#include <algorithm>
#include <cmath>

namespace plinth::spec_decode {

namespace {
constexpr double kDefaultVerifyTokenCost = 0.25;  // see README: measured on backend_cpu
constexpr double kInitialAlpha = 0.7;             // optimistic: a new sequence gets to try
constexpr double kEmaWeight = 0.3;                // weight of the newest verification
constexpr double kPriorTrials = 3.0;  // kInitialAlpha counts as this many trials of evidence

DraftPolicy::SeqState fresh() {
  DraftPolicy::SeqState s{};
  s.alpha = kInitialAlpha;
  s.successes = kInitialAlpha * kPriorTrials;  // so that one rejection does not pause at once
  s.trials = kPriorTrials;
  return s;
}
}  // namespace

DraftPolicy::DraftPolicy(const SpecConfig& c, double draft_token_cost)
    : schedule_(c.draft_len_schedule),
      adaptive_(c.adaptive),
      cost_per_token_(draft_token_cost +
                      (c.verify_token_cost > 0 ? c.verify_token_cost : kDefaultVerifyTokenCost)),
      probe_interval_(c.probe_interval) {
  if (schedule_.empty()) {
    const uint32_t k = c.num_speculative_tokens;
    schedule_ = {{4, k}, {16, std::max<uint32_t>(1, k / 2)}};
  }
  for (ScheduleRow& r : schedule_) r.k = std::min(r.k, c.num_speculative_tokens);
}

uint32_t DraftPolicy::k_for_batch(uint32_t batch_size) const {
  for (const ScheduleRow& r : schedule_) {
    if (batch_size <= r.max_batch_size) return r.k;
  }
  return 0;
}

uint32_t DraftPolicy::best_k(double alpha, uint32_t limit) const {
  alpha = std::clamp(alpha, 0.0, 0.999);
  uint32_t best = 0;
  double best_ratio = 1.0;
  for (uint32_t k = 1; k <= limit; ++k) {
    const double expected = (1.0 - std::pow(alpha, k + 1)) / (1.0 - alpha);
    const double ratio = expected / (1.0 + k * cost_per_token_);
    if (ratio > best_ratio) {
      best_ratio = ratio;
      best = k;
    }
  }
  return best;
}

uint32_t DraftPolicy::k_for_seq(uint64_t seq, uint32_t limit) {
  if (!adaptive_ || limit == 0) return limit;
  SeqState& s = seqs_.try_emplace(seq, fresh()).first->second;
  const uint32_t k = best_k(s.alpha, limit);
  if (k > 0) return k;
  if (++s.paused_steps < probe_interval_) return 0;
  s.paused_steps = 0;
  return 1;  // probe
}

void DraftPolicy::observe(uint64_t seq, uint32_t drafted, uint32_t accepted) {
  if (drafted == 0) return;
  SeqState& s = seqs_.try_emplace(seq, fresh()).first->second;
  // Each draft position up to the first rejection is one Bernoulli trial of the per-token
  // acceptance α: `accepted` successes, plus one failure unless all were kept. α is the
  // decayed successes over the decayed trials (the maximum-likelihood estimate, forgetting).
  s.successes = (1.0 - kEmaWeight) * s.successes + accepted;
  s.trials = (1.0 - kEmaWeight) * s.trials + accepted + (accepted < drafted ? 1 : 0);
  s.alpha = s.trials > 0 ? s.successes / s.trials : s.alpha;
}

}  // namespace plinth::spec_decode
