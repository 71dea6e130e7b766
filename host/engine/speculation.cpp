#include "engine/speculation.hpp"

#include <algorithm>
#include <cstddef>
#include <cstring>
#include <stdexcept>
#include <string>

#include "engine/array_stride.hpp"
#include "engine/sequence.hpp"
#include "runtime/call.hpp"

namespace plinth {

namespace {

// Older speculators have no num_lookahead_slots: the host reserves this many draft slots.
constexpr uint32_t kDefaultLookahead = 4;

size_t argmax(std::span<const float> p) {
  return static_cast<size_t>(std::max_element(p.begin(), p.end()) - p.begin());
}

}  // namespace

Speculation::Speculation(const plinth_speculator_vtable* vtable, plinth_instance* instance,
                         uint32_t abi_minor, uint32_t vocab_size, uint32_t context_length)
    : vt_(vtable),
      inst_(instance),
      minor_(abi_minor),
      vocab_(vocab_size),
      context_length_(context_length) {
  if (vt_ == nullptr || vt_->propose == nullptr || vt_->verify == nullptr) {
    throw std::invalid_argument("speculator: propose and verify are required");
  }
}

uint32_t Speculation::lookahead_slots(uint32_t num_running) {
  if (minor_ < 2 || !PLINTH_HAS_FIELD(vt_, plinth_speculator_vtable, num_lookahead_slots) ||
      vt_->num_lookahead_slots == nullptr) {
    return kDefaultLookahead;
  }
  return vt_->num_lookahead_slots(inst_, num_running);
}

uint32_t Speculation::max_draft(const BatchBuilder::Entry& e) const {
  const Sequence& seq = *e.seq;
  const auto len = static_cast<uint32_t>(seq.tokens().size());
  // Only a decode: everything but the last token computed, and something generated already.
  if (e.num_computed + 1 != len || len <= seq.num_prompt_tokens() || e.num_new < 2) return 0;
  if (!seq.speculative() || seq.finished()) return 0;
  if (minor_ < 2 && !seq.greedy()) return 0;  // older plugins verify greedily only
  // k drafts add up to k + 1 tokens: within max_tokens and the context.
  const uint32_t room =
      std::min(seq.tokens_left(), context_length_ - std::min(len, context_length_));
  if (room < 2) return 0;
  return std::min(e.num_new - 1, room - 1);
}

void Speculation::propose(std::vector<BatchBuilder::Entry>& entries) {
  std::vector<size_t> which;
  std::vector<plinth_spec_seq> seqs;
  std::vector<uint32_t> limits;
  for (size_t i = 0; i < entries.size(); ++i) {
    BatchBuilder::Entry& e = entries[i];
    const uint32_t k = max_draft(e);
    const auto len = static_cast<uint32_t>(e.seq->tokens().size());
    if (e.num_computed + e.num_new > len && k == 0) e.num_new = len - e.num_computed;
    if (k == 0) continue;
    which.push_back(i);
    seqs.push_back({e.seq->id(), e.seq->tokens().data(), len});
    limits.push_back(k);
  }
  if (seqs.empty()) return;

  plinth_error err = make_error();
  plinth_spec_proposal out{};
  out.struct_size = sizeof(out);
  const bool batch_api = minor_ >= 2 &&
                         PLINTH_HAS_FIELD(vt_, plinth_speculator_vtable, propose_batch) &&
                         vt_->propose_batch != nullptr;
  if (batch_api) {
    plinth_spec_propose_args args{};
    args.struct_size = sizeof(args);
    args.num_seqs = static_cast<uint32_t>(seqs.size());
    args.seqs = seqs.data();
    args.max_draft = limits.data();
    args.batch_size = static_cast<uint32_t>(entries.size());
    check(vt_->propose_batch(inst_, &args, &out, &err), err, "speculator.propose_batch");
  } else {
    const uint32_t k = *std::max_element(limits.begin(), limits.end());
    check(vt_->propose(inst_, seqs.data(), static_cast<uint32_t>(seqs.size()), k, &out, &err), err,
          "speculator.propose");
  }
  if (out.num_seqs != seqs.size() || (out.num_seqs > 0 && out.num_draft == nullptr)) {
    throw std::logic_error("speculator.propose answered for " + std::to_string(out.num_seqs) +
                           " sequences, asked for " + std::to_string(seqs.size()));
  }
  const bool has_probs =
      PLINTH_HAS_FIELD(&out, plinth_spec_proposal, draft_probs) && out.draft_probs != nullptr;
  if (has_probs && out.vocab_size != vocab_) {
    throw std::logic_error("speculator.propose: draft_probs rows of " +
                           std::to_string(out.vocab_size) + ", the vocabulary holds " +
                           std::to_string(vocab_));
  }
  for (size_t s = 0; s < seqs.size(); ++s) {
    uint32_t n = out.num_draft[s];
    if (n > out.max_draft) {
      throw std::logic_error("speculator.propose: " + std::to_string(n) +
                             " drafts for a row stride of " + std::to_string(out.max_draft));
    }
    if (n > limits[s]) {
      // The batch API promised the limit (a proposer may have written KV up to it); the plain
      // propose only knows the largest, so its extra drafts are dropped.
      if (batch_api) {
        throw std::logic_error("speculator.propose_batch: " + std::to_string(n) +
                               " drafts for sequence " + std::to_string(seqs[s].seq) +
                               ", whose max_draft is " + std::to_string(limits[s]));
      }
      n = limits[s];
    }
    BatchBuilder::Entry& e = entries[which[s]];
    const int32_t* row = out.draft_tokens + s * out.max_draft;
    e.drafts.assign(row, row + n);
    for (int32_t t : e.drafts) {
      if (t < 0 || static_cast<uint32_t>(t) >= vocab_) {
        throw std::logic_error("speculator.propose: draft token " + std::to_string(t) +
                               " outside the vocabulary [0, " + std::to_string(vocab_) + ")");
      }
    }
    e.num_new = 1 + n;
    if (has_probs && n > 0) {
      const float* q = out.draft_probs + s * size_t{out.max_draft} * vocab_;
      e.draft_probs.assign(q, q + size_t{n} * vocab_);
    }
  }
}

std::vector<Speculation::Verdict> Speculation::verify(std::span<const BatchBuilder::Entry> entries,
                                                      std::span<const size_t> rows,
                                                      const float* logits) {
  std::vector<Verdict> verdicts(entries.size());
  std::vector<size_t> which;
  // Per item: target tokens [k + 1], probabilities [k + 1, vocab] (sampling only), uniforms.
  std::vector<std::vector<int32_t>> targets;
  std::vector<std::vector<float>> probs;
  std::vector<std::vector<double>> uniforms;
  for (size_t i = 0; i < entries.size(); ++i) {
    const BatchBuilder::Entry& e = entries[i];
    if (e.drafts.empty()) continue;
    Sequence& seq = *const_cast<Sequence*>(e.seq);
    const size_t k = e.drafts.size();
    std::vector<int32_t> t(k + 1);
    std::vector<float> p;
    std::vector<double> u;
    if (!seq.greedy()) p.resize((k + 1) * vocab_);
    try {
      for (size_t j = 0; j <= k; ++j) {
        std::span<const float> row(logits + (rows[i] + j) * vocab_, vocab_);
        // Penalties count the drafts before j as if accepted: the distribution plain decoding
        // would use at position j once those tokens are in the output.
        std::vector<float> dist = seq.distribution(row, std::span(e.drafts).first(j));
        t[j] = static_cast<int32_t>(argmax(dist));
        if (!p.empty()) std::copy(dist.begin(), dist.end(), p.begin() + j * vocab_);
      }
    } catch (const NonFiniteLogits& bad) {
      verdicts[i].failure = bad;  // this sequence alone fails; the others are verified
      continue;
    }
    if (!p.empty()) {
      u.resize(2 * (k + 1));
      for (double& x : u) x = seq.uniform();
    }
    which.push_back(i);
    targets.push_back(std::move(t));
    probs.push_back(std::move(p));
    uniforms.push_back(std::move(u));
  }
  if (which.empty()) return verdicts;

  std::vector<plinth_spec_verify> items(which.size());
  for (size_t n = 0; n < which.size(); ++n) {
    const BatchBuilder::Entry& e = entries[which[n]];
    plinth_spec_verify& v = items[n];
    v.seq = e.seq->id();
    v.num_draft = static_cast<uint32_t>(e.drafts.size());
    v.draft_tokens = e.drafts.data();
    v.target_tokens = targets[n].data();
    v.target_probs = probs[n].empty() ? nullptr : probs[n].data();
    v.draft_probs = (probs[n].empty() || e.draft_probs.empty()) ? nullptr : e.draft_probs.data();
    v.vocab_size = vocab_;
    v.uniforms = uniforms[n].empty() ? nullptr : uniforms[n].data();
  }
  const StridedArray<plinth_spec_verify> packed(items, spec_verify_stride(minor_));
  std::vector<uint32_t> accepted(items.size(), 0);
  std::vector<int32_t> next(items.size(), -1);
  plinth_error err = make_error();
  check(vt_->verify(inst_, packed.data(), packed.size(), accepted.data(), next.data(), &err), err,
        "speculator.verify");

  for (size_t n = 0; n < which.size(); ++n) {
    const plinth_spec_verify& v = items[n];
    const uint32_t a = accepted[n];
    if (a > v.num_draft || next[n] < 0 || static_cast<uint32_t>(next[n]) >= vocab_) {
      throw std::logic_error("speculator.verify for sequence " + std::to_string(v.seq) +
                             ": accepted " + std::to_string(a) + " of " +
                             std::to_string(v.num_draft) + " drafts, next token " +
                             std::to_string(next[n]) +
                             "; expected 0..num_draft and a token in "
                             "the vocabulary");
    }
    if (v.target_probs == nullptr) {  // greedy: exactly the target's argmax tokens
      bool ok = next[n] == v.target_tokens[a];
      for (uint32_t j = 0; j < a; ++j) ok = ok && v.draft_tokens[j] == v.target_tokens[j];
      if (!ok) {
        throw std::logic_error("speculator.verify for greedy sequence " + std::to_string(v.seq) +
                               " kept tokens that are not the target's argmax: a greedy verify "
                               "accepts drafts while they equal target_tokens and then returns "
                               "target_tokens[accepted]");
      }
    }
    verdicts[which[n]].accepted = a;
    verdicts[which[n]].next_token = next[n];
    stats_.num_drafts++;
    stats_.num_draft_tokens += v.num_draft;
    stats_.num_accepted_tokens += a;
    if (stats_.accepted_per_position.size() < v.num_draft) {
      stats_.accepted_per_position.resize(v.num_draft, 0);
    }
    for (uint32_t j = 0; j < a; ++j) stats_.accepted_per_position[j]++;
  }
  return verdicts;
}

void Speculation::release(plinth_seq_id seq) {
  if (vt_->release_seq != nullptr) vt_->release_seq(inst_, seq);
}

}  // namespace plinth
