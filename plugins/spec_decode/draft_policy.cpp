#include "draft_policy.hpp"

#include <algorithm>
#include <cmath>

namespace plinth::spec_decode {

namespace {
constexpr double kDefaultVerifyTokenCost = 0.25;  // see README: measured on backend_cpu
constexpr double kInitialAlpha = 0.7;             // optimistic: a new sequence gets to try
constexpr double kEmaWeight = 0.3;                // weight of the newest verification
constexpr double kPriorTrials = 3.0;  // kInitialAlpha counts as this many trials of evidence

constexpr double kGlobalDecay = 0.05;    // weight of the newest verification in the method's α
constexpr double kGlobalEvidence = 3.0;  // trials before the method's α replaces the prior
constexpr uint32_t kBadMethodProbeFactor = 8;  // probes this much rarer when the method fails

DraftPolicy::SeqState fresh(double alpha) {
  DraftPolicy::SeqState s{};
  s.alpha = alpha;
  s.successes = alpha * kPriorTrials;  // so that one rejection does not pause at once
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
    // Measured (bench/spec): past 4 sequences a model-drafted step costs more than it saves on
    // backend_cpu; n-gram drafts are free, so they keep k / 2 up to 16.
    const uint32_t k = c.num_speculative_tokens;
    if (c.method == Method::kNgram) {
      schedule_ = {{4, k}, {16, std::max<uint32_t>(1, k / 2)}};
    } else {
      schedule_ = {{4, k}};
    }
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

double DraftPolicy::method_alpha() const {
  return global_trials_ >= kGlobalEvidence ? global_successes_ / global_trials_ : kInitialAlpha;
}

uint32_t DraftPolicy::k_for_seq(uint64_t seq, uint32_t limit) {
  if (!adaptive_ || limit == 0) return limit;
  SeqState& s = seqs_.try_emplace(seq, fresh(method_alpha())).first->second;
  const uint32_t k = best_k(s.alpha, limit);
  if (k > 0) return k;
  // Paused. A probe costs little when the method works for other sequences; when it fails for
  // all (its α does not pay either), probes are rarer: a draft model must catch up on every
  // token since the sequence last drafted.
  const uint32_t interval =
      best_k(method_alpha(), limit) > 0 ? probe_interval_ : probe_interval_ * kBadMethodProbeFactor;
  if (++s.paused_steps < interval) return 0;
  s.paused_steps = 0;
  return 1;  // probe
}

void DraftPolicy::observe(uint64_t seq, uint32_t drafted, uint32_t accepted) {
  if (drafted == 0) return;
  SeqState& s = seqs_.try_emplace(seq, fresh(method_alpha())).first->second;
  // Each draft position up to the first rejection is one Bernoulli trial of the per-token
  // acceptance α: `accepted` successes, plus one failure unless all were kept. α is the
  // decayed successes over the decayed trials (the maximum-likelihood estimate, forgetting).
  s.successes = (1.0 - kEmaWeight) * s.successes + accepted;
  s.trials = (1.0 - kEmaWeight) * s.trials + accepted + (accepted < drafted ? 1 : 0);
  s.alpha = s.trials > 0 ? s.successes / s.trials : s.alpha;
  // The method's α over all sequences: the prior of the next new sequence.
  global_successes_ = (1.0 - kGlobalDecay) * global_successes_ + accepted;
  global_trials_ = (1.0 - kGlobalDecay) * global_trials_ + accepted + (accepted < drafted ? 1 : 0);
}

}  // namespace plinth::spec_decode
