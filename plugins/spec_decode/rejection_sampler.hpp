// spec_decode — verification of one sequence's drafts against the target model.
//   greedy (no target_probs): accept drafts while they equal the target's argmax tokens, then the
//     target's token at the first mismatch (or the bonus token after all k) — exactly the
//     target's greedy output.
//   sampling: the modified rejection sampling of Leviathan et al. (ICML 2023, Algorithm 1) and
//     Chen et al. (2023): draft x_j drawn from q_j is accepted with probability
//     min(1, p_j(x_j) / q_j(x_j)); at the first rejection the token is drawn from
//     norm(max(0, p_j - q_j)); after k acceptances the bonus token is drawn from p_k. The emitted
//     tokens are distributed exactly as sampling from p. A deterministic draft is q = one-hot.
#pragma once

#include <plinth/speculator.h>

#include <cstdint>
#include <functional>

namespace plinth::spec_decode {

struct Verdict {
  uint32_t accepted;   ///< drafts kept, 0..num_draft
  int32_t next_token;  ///< the correction token, or the bonus token when all were kept
};

/// Verifies one item (plinth_spec_verify: target_probs [k + 1, vocab] in probability space after
/// the request's sampling transforms, draft_probs [k, vocab] or NULL). Uses item.uniforms when
/// given, else draws from `fallback` (a [0, 1) source). Throws std::invalid_argument for an item
/// whose arrays are missing, or (sampling) whose vocab_size is 0 or drafts lie outside it.
Verdict verify_item(const plinth_spec_verify& item, const std::function<double()>& fallback);

}  // namespace plinth::spec_decode
