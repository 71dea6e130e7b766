#include "rejection_sampler.hpp"

#include <stdexcept>
#include <string>
#include <vector>

namespace plinth::spec_decode {

namespace {

// Draws from weights w[0..n) (unnormalized, >= 0, total > 0) by inverse CDF with u in [0, 1).
int32_t draw(const std::vector<double>& w, double total, double u) {
  const double target = u * total;
  double cum = 0.0;
  int32_t last = -1;
  for (size_t i = 0; i < w.size(); ++i) {
    if (w[i] <= 0.0) continue;
    last = static_cast<int32_t>(i);
    cum += w[i];
    if (target < cum) return last;
  }
  return last;  // rounding left target >= cum: the last live token
}

}  // namespace

Verdict verify_item(const plinth_spec_verify& v, const std::function<double()>& fallback) {
  const uint32_t k = v.num_draft;
  if ((k > 0 && v.draft_tokens == nullptr) || v.target_tokens == nullptr) {
    throw std::invalid_argument("verify: draft_tokens and target_tokens are required");
  }
  if (v.target_probs == nullptr) {  // greedy
    uint32_t a = 0;
    while (a < k && v.draft_tokens[a] == v.target_tokens[a]) ++a;
    return {a, v.target_tokens[a]};
  }
  const size_t vocab = v.vocab_size;
  if (vocab == 0) throw std::invalid_argument("verify: target_probs given with vocab_size 0");
  for (uint32_t j = 0; j < k; ++j) {  // a draft indexes the probability rows
    if (v.draft_tokens[j] < 0 || static_cast<size_t>(v.draft_tokens[j]) >= vocab) {
      throw std::invalid_argument("verify: draft token " + std::to_string(v.draft_tokens[j]) +
                                  " is outside the vocabulary of " + std::to_string(vocab));
    }
  }
  auto u = [&](size_t i) { return v.uniforms != nullptr ? v.uniforms[i] : fallback(); };
  std::vector<double> w(vocab);
  for (uint32_t j = 0; j < k; ++j) {
    const float* p = v.target_probs + j * vocab;
    const float* q = v.draft_probs != nullptr ? v.draft_probs + j * vocab : nullptr;
    const auto x = static_cast<size_t>(v.draft_tokens[j]);
    const double px = p[x];
    const double qx = q != nullptr ? q[x] : 1.0;
    const double accept_u = u(2 * j);
    if (qx > 0.0 && accept_u * qx < px) continue;  // u < p/q, without dividing
    // Rejected: the residual max(0, p - q), normalized (q one-hot: p without x).
    double total = 0.0;
    for (size_t i = 0; i < vocab; ++i) {
      const double qi = q != nullptr ? q[i] : (i == x ? 1.0 : 0.0);
      w[i] = std::max(0.0, static_cast<double>(p[i]) - qi);
      total += w[i];
    }
    if (total <= 0.0) {  // p == q up to rounding: the residual is empty, draw from p itself
      total = 0.0;
      for (size_t i = 0; i < vocab; ++i) total += (w[i] = p[i]);
    }
    return {j, draw(w, total, u(2 * j + 1))};
  }
  const float* p = v.target_probs + size_t{k} * vocab;  // all accepted: the bonus token from p_k
  double total = 0.0;
  for (size_t i = 0; i < vocab; ++i) total += (w[i] = p[i]);
  return {k, draw(w, total, u(2 * size_t{k} + 1))};
}

}  // namespace plinth::spec_decode
