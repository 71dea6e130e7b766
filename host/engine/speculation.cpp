#include "engine/speculation.hpp"

#include "engine/grammar.hpp"

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

Speculation::DraftAsk Speculation::ask_for(std::vector<BatchBuilder::Entry>& entries) const {
  DraftAsk ask;
  for (size_t i = 0; i < entries.size(); ++i) {
    BatchBuilder::Entry& e = entries[i];
    const uint32_t k = max_draft(e);
    const auto len = static_cast<uint32_t>(e.seq->tokens().size());
    if (e.num_computed + e.num_new > len && k == 0) e.num_new = len - e.num_computed;
    if (k == 0) continue;
    ask.which.push_back(i);
    ask.seqs.push_back({e.seq->id(), e.seq->tokens().data(), len});
    ask.limits.push_back(k);
  }
  return ask;
}

bool Speculation::has_batch_propose() const {
  return minor_ >= 2 && PLINTH_HAS_FIELD(vt_, plinth_speculator_vtable, propose_batch) &&
         vt_->propose_batch != nullptr;
}

plinth_spec_proposal Speculation::call_propose(const DraftAsk& ask, uint32_t batch_size,
                                               bool batch_api) {
  plinth_error err = make_error();
  plinth_spec_proposal out{};
  out.struct_size = sizeof(out);
  if (batch_api) {
    plinth_spec_propose_args args{};
    args.struct_size = sizeof(args);
    args.num_seqs = static_cast<uint32_t>(ask.seqs.size());
    args.seqs = ask.seqs.data();
    args.max_draft = ask.limits.data();
    args.batch_size = batch_size;
    check(vt_->propose_batch(inst_, &args, &out, &err), err, "speculator.propose_batch");
  } else {
    const uint32_t k = *std::max_element(ask.limits.begin(), ask.limits.end());
    check(
        vt_->propose(inst_, ask.seqs.data(), static_cast<uint32_t>(ask.seqs.size()), k, &out, &err),
        err, "speculator.propose");
  }
  if (out.num_seqs != ask.seqs.size() || (out.num_seqs > 0 && out.num_draft == nullptr)) {
    throw std::logic_error("speculator.propose answered for " + std::to_string(out.num_seqs) +
                           " sequences, asked for " + std::to_string(ask.seqs.size()));
  }
  return out;
}

uint32_t Speculation::num_drafts(const plinth_spec_proposal& out, size_t s, uint32_t limit,
                                 plinth_seq_id seq, bool batch_api) {
  const uint32_t n = out.num_draft[s];
  if (n > out.max_draft) {
    throw std::logic_error("speculator.propose: " + std::to_string(n) +
                           " drafts for a row stride of " + std::to_string(out.max_draft));
  }
  if (n <= limit) return n;
  // The batch API promised the limit (a proposer may have written KV up to it); the plain
  // propose only knows the largest, so its extra drafts are dropped.
  if (batch_api) {
    throw std::logic_error("speculator.propose_batch: " + std::to_string(n) +
                           " drafts for sequence " + std::to_string(seq) + ", whose max_draft is " +
                           std::to_string(limit));
  }
  return limit;
}

void Speculation::take_drafts(BatchBuilder::Entry& e, const plinth_spec_proposal& out, size_t s,
                              uint32_t n, bool has_probs) const {
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

void Speculation::propose(std::vector<BatchBuilder::Entry>& entries) {
  const DraftAsk ask = ask_for(entries);
  if (ask.seqs.empty()) return;
  const bool batch_api = has_batch_propose();
  const plinth_spec_proposal out =
      call_propose(ask, static_cast<uint32_t>(entries.size()), batch_api);
  const bool has_probs =
      PLINTH_HAS_FIELD(&out, plinth_spec_proposal, draft_probs) && out.draft_probs != nullptr;
  if (has_probs && out.vocab_size != vocab_) {
    throw std::logic_error("speculator.propose: draft_probs rows of " +
                           std::to_string(out.vocab_size) + ", the vocabulary holds " +
                           std::to_string(vocab_));
  }
  for (size_t s = 0; s < ask.seqs.size(); ++s) {
    const uint32_t n = num_drafts(out, s, ask.limits[s], ask.seqs[s].seq, batch_api);
    take_drafts(entries[ask.which[s]], out, s, n, has_probs);
  }
}

Speculation::Target Speculation::target_of(const BatchBuilder::Entry& e,
                                           const float* first_row) const {
  Sequence& seq = *e.seq;
  const size_t k = e.drafts.size();
  Target target;
  target.tokens.resize(k + 1);
  if (!seq.greedy()) target.probs.resize((k + 1) * vocab_);
  for (size_t j = 0; j <= k; ++j) {
    std::span<const float> row(first_row + j * vocab_, vocab_);
    // Penalties count the drafts before j as if accepted: the distribution plain decoding
    // would use at position j once those tokens are in the output.
    std::vector<float> dist = seq.distribution(row, std::span(e.drafts).first(j));
    target.tokens[j] = static_cast<int32_t>(argmax(dist));
    if (!target.probs.empty()) {
      std::copy(dist.begin(), dist.end(), target.probs.begin() + j * vocab_);
    }
  }
  if (!target.probs.empty()) {
    target.uniforms.resize(2 * (k + 1));
    for (double& x : target.uniforms) x = seq.uniform();
  }
  return target;
}

plinth_spec_verify Speculation::verify_item(const BatchBuilder::Entry& e,
                                            const Target& target) const {
  plinth_spec_verify v{};
  v.seq = e.seq->id();
  v.num_draft = static_cast<uint32_t>(e.drafts.size());
  v.draft_tokens = e.drafts.data();
  v.target_tokens = target.tokens.data();
  v.target_probs = target.probs.empty() ? nullptr : target.probs.data();
  v.draft_probs = (target.probs.empty() || e.draft_probs.empty()) ? nullptr : e.draft_probs.data();
  v.vocab_size = vocab_;
  v.uniforms = target.uniforms.empty() ? nullptr : target.uniforms.data();
  return v;
}

void Speculation::check_answer(const plinth_spec_verify& v, uint32_t a, int32_t next) const {
  if (a > v.num_draft || next < 0 || static_cast<uint32_t>(next) >= vocab_) {
    throw std::logic_error("speculator.verify for sequence " + std::to_string(v.seq) +
                           ": accepted " + std::to_string(a) + " of " +
                           std::to_string(v.num_draft) + " drafts, next token " +
                           std::to_string(next) +
                           "; expected 0..num_draft and a token in "
                           "the vocabulary");
  }
  if (v.target_probs != nullptr) return;
  // Greedy: exactly the target's argmax tokens.
  bool ok = next == v.target_tokens[a];
  for (uint32_t j = 0; j < a; ++j) ok = ok && v.draft_tokens[j] == v.target_tokens[j];
  if (!ok) {
    throw std::logic_error("speculator.verify for greedy sequence " + std::to_string(v.seq) +
                           " kept tokens that are not the target's argmax: a greedy verify "
                           "accepts drafts while they equal target_tokens and then returns "
                           "target_tokens[accepted]");
  }
}

void Speculation::count(uint32_t num_draft, uint32_t accepted) {
  stats_.num_drafts++;
  stats_.num_draft_tokens += num_draft;
  stats_.num_accepted_tokens += accepted;
  if (stats_.accepted_per_position.size() < num_draft) {
    stats_.accepted_per_position.resize(num_draft, 0);
  }
  for (uint32_t j = 0; j < accepted; ++j) stats_.accepted_per_position[j]++;
}

std::vector<Speculation::Verdict> Speculation::verify(std::span<const BatchBuilder::Entry> entries,
                                                      std::span<const size_t> rows,
                                                      const float* logits) {
  std::vector<Verdict> verdicts(entries.size());
  std::vector<size_t> which;
  std::vector<Target> targets;
  for (size_t i = 0; i < entries.size(); ++i) {
    if (entries[i].drafts.empty()) continue;
    try {
      targets.push_back(target_of(entries[i], logits + rows[i] * vocab_));
    } catch (const NonFiniteLogits& bad) {
      verdicts[i].failure = bad;  // this sequence alone fails; the others are verified
      continue;
    } catch (const GrammarContractError& bad) {
      verdicts[i].grammar_failure = bad.what();
      continue;
    }
    which.push_back(i);
  }
  if (which.empty()) return verdicts;

  std::vector<plinth_spec_verify> items(which.size());
  for (size_t n = 0; n < which.size(); ++n) items[n] = verify_item(entries[which[n]], targets[n]);
  const StridedArray<plinth_spec_verify> packed(items, spec_verify_stride(minor_));
  std::vector<uint32_t> accepted(items.size(), 0);
  std::vector<int32_t> next(items.size(), -1);
  plinth_error err = make_error();
  check(vt_->verify(inst_, packed.data(), packed.size(), accepted.data(), next.data(), &err), err,
        "speculator.verify");

  for (size_t n = 0; n < which.size(); ++n) {
    check_answer(items[n], accepted[n], next[n]);
    verdicts[which[n]].accepted = accepted[n];
    verdicts[which[n]].next_token = next[n];
    count(items[n].num_draft, accepted[n]);
  }
  return verdicts;
}

void Speculation::release(plinth_seq_id seq) {
  if (vt_->release_seq != nullptr) vt_->release_seq(inst_, seq);
}

}  // namespace plinth
