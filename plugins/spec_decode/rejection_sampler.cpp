#include "rejection_sampler.hpp"

#include <algorithm>
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

// Throws std::invalid_argument unless every draft token indexes a row of vocab_size entries.
void check_draft_tokens(const plinth_spec_verify& v, size_t vocab) {
  for (uint32_t j = 0; j < v.num_draft; ++j) {
    if (v.draft_tokens[j] < 0 || static_cast<size_t>(v.draft_tokens[j]) >= vocab) {
      throw std::invalid_argument("verify: draft token " + std::to_string(v.draft_tokens[j]) +
                                  " is outside the vocabulary of " + std::to_string(vocab));
    }
  }
}

// w = p (vocab entries); returns their total.
double copy_probs(const float* p, std::vector<double>& w) {
  double total = 0.0;
  for (size_t i = 0; i < w.size(); ++i) total += (w[i] = p[i]);
  return total;
}

// w = the residual max(0, p - q) of a rejected draft token x (q null: one-hot at x, so p without
// x); where it is empty (p == q up to rounding), p itself. Returns w's total.
double residual(const float* p, const float* q, size_t x, std::vector<double>& w) {
  double total = 0.0;
  for (size_t i = 0; i < w.size(); ++i) {
    const double qi = q != nullptr ? q[i] : (i == x ? 1.0 : 0.0);
    w[i] = std::max(0.0, static_cast<double>(p[i]) - qi);
    total += w[i];
  }
  return total > 0.0 ? total : copy_probs(p, w);
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
  check_draft_tokens(v, vocab);
  auto u = [&](size_t i) { return v.uniforms != nullptr ? v.uniforms[i] : fallback(); };
  std::vector<double> w(vocab);
  for (uint32_t j = 0; j < k; ++j) {
    const float* p = v.target_probs + j * vocab;
    const float* q = v.draft_probs != nullptr ? v.draft_probs + j * vocab : nullptr;
    const auto x = static_cast<size_t>(v.draft_tokens[j]);
    const double px = p[x];
    const double qx = q != nullptr ? q[x] : 1.0;
    const double accept_u = u(size_t{2} * j);
    if (qx > 0.0 && accept_u * qx < px) continue;  // u < p/q, without dividing
    // Rejected: draw from the residual max(0, p - q), normalized.
    const double total = residual(p, q, x, w);
    return {j, draw(w, total, u(size_t{2} * j + 1))};
  }
  const float* p = v.target_probs + size_t{k} * vocab;  // all accepted: the bonus token from p_k
  const double total = copy_probs(p, w);
  return {k, draw(w, total, u(2 * size_t{k} + 1))};
}

}  // namespace plinth::spec_decode
