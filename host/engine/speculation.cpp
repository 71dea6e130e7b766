#include "engine/speculation.hpp"

#include "engine/grammar.hpp"

#include <algorithm>
#include <cstddef>
#include <cstring>
#include <stdexcept>
#include <string>

#include "engine/array_stride.hpp"
#include "engine/contract_check.hpp"
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
                         uint32_t abi_minor, uint32_t vocab_size, uint32_t context_length,
                         const std::string& name)
    : vt_(vtable),
      inst_(instance),
      minor_(abi_minor),
      vocab_(vocab_size),
      context_length_(context_length),
      name_(contract::plugin("speculator", name)) {
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

uint32_t draft_room(const BatchBuilder::Entry& e, uint32_t context_length) {
  const Sequence& seq = *e.seq;
  const auto len = static_cast<uint32_t>(seq.tokens().size());
  // Only a decode: everything but the last token computed, and something generated already.
  if (e.num_computed + 1 != len || len <= seq.num_prompt_tokens() || e.num_new < 2) return 0;
  if (!seq.speculative() || seq.finished()) return 0;
  // k drafts add up to k + 1 tokens: within max_tokens and the context.
  const uint32_t room = std::min(seq.tokens_left(), context_length - std::min(len, context_length));
  if (room < 2) return 0;
  return std::min(e.num_new - 1, room - 1);
}

void count_verified(SpecStats& stats, uint32_t num_draft, uint32_t accepted) {
  stats.num_drafts++;
  stats.num_draft_tokens += num_draft;
  stats.num_accepted_tokens += accepted;
  if (stats.accepted_per_position.size() < num_draft) {
    stats.accepted_per_position.resize(num_draft, 0);
  }
  for (uint32_t j = 0; j < accepted; ++j) stats.accepted_per_position[j]++;
}

uint32_t Speculation::max_draft(const BatchBuilder::Entry& e) const {
  if (minor_ < 2 && !e.seq->greedy()) return 0;  // older plugins verify greedily only
  return draft_room(e, context_length_);
}

Speculation::DraftAsk Speculation::ask_for(std::vector<BatchBuilder::Entry>& entries) const {
  DraftAsk ask;
  for (size_t i = 0; i < entries.size(); ++i) {
    BatchBuilder::Entry& e = entries[i];
    if (e.forced) continue;  // forced-token drafts: the host's, verified by the host
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
  return out;
}

void Speculation::take_drafts(BatchBuilder::Entry& e, const plinth_spec_proposal& out, size_t s,
                              uint32_t n, bool has_probs) const {
  const int32_t* row = out.draft_tokens + s * out.max_draft;
  e.drafts.assign(row, row + n);
  e.num_new = 1 + n;
  if (has_probs && n > 0) {
    const float* q = out.draft_probs + s * size_t{out.max_draft} * vocab_;
    e.draft_probs.assign(q, q + size_t{n} * vocab_);
  }
}

std::vector<Speculation::Failure> Speculation::propose(std::vector<BatchBuilder::Entry>& entries) {
  std::vector<Failure> failures;
  const DraftAsk ask = ask_for(entries);
  if (ask.seqs.empty()) return failures;
  const bool batch_api = has_batch_propose();
  const plinth_spec_proposal out =
      call_propose(ask, static_cast<uint32_t>(entries.size()), batch_api);
  if (auto why = contract::spec_proposal(name_, out, ask.seqs.size(), vocab_)) {
    // The answer as a whole is broken: none of it is used, and whom it was for fails.
    const std::string msg = *why + "; the " + std::to_string(ask.seqs.size()) +
                            " sequences asked for drafts in that step fail";
    for (const plinth_spec_seq& q : ask.seqs) failures.push_back({q.seq, msg});
    return failures;
  }
  const bool has_probs =
      PLINTH_HAS_FIELD(&out, plinth_spec_proposal, draft_probs) && out.draft_probs != nullptr;
  for (size_t s = 0; s < ask.seqs.size(); ++s) {
    const uint32_t n = out.num_draft[s];
    const uint32_t limit = ask.limits[s];
    // The plain propose only knows the largest limit: its extra drafts are dropped.
    const uint32_t keep = std::min(n, limit);
    const std::span<const int32_t> row(out.draft_tokens + s * out.max_draft,
                                       n <= out.max_draft ? keep : 0);
    if (auto why = contract::spec_drafts(name_, ask.seqs[s].seq, n, out.max_draft, limit, batch_api,
                                         row, vocab_)) {
      failures.push_back({ask.seqs[s].seq, *why + "; this sequence fails, the others go on"});
      continue;
    }
    take_drafts(entries[ask.which[s]], out, s, keep, has_probs);
  }
  return failures;
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
    if (target.probs.empty()) {  // greedy: the token alone
      target.tokens[j] = seq.greedy_token(row, std::span(e.drafts).first(j));
      continue;
    }
    std::vector<float> dist = seq.distribution(row, std::span(e.drafts).first(j));
    target.tokens[j] = static_cast<int32_t>(argmax(dist));
    std::copy(dist.begin(), dist.end(), target.probs.begin() + j * vocab_);
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

std::vector<Speculation::Verdict> Speculation::verify(std::span<const BatchBuilder::Entry> entries,
                                                      std::span<const size_t> rows,
                                                      const float* logits) {
  std::vector<Verdict> verdicts(entries.size());
  std::vector<size_t> which;
  std::vector<Target> targets;
  for (size_t i = 0; i < entries.size(); ++i) {
    if (entries[i].drafts.empty() || entries[i].forced) continue;
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
    if (auto why = contract::spec_verdict(name_, items[n], accepted[n], next[n], vocab_)) {
      verdicts[which[n]].speculator_failure = *why + "; this sequence fails, the others go on";
      continue;
    }
    verdicts[which[n]].accepted = accepted[n];
    verdicts[which[n]].next_token = next[n];
    count_verified(stats_, items[n].num_draft, accepted[n]);
  }
  return verdicts;
}

void Speculation::release(plinth_seq_id seq) {
  if (vt_->release_seq != nullptr) vt_->release_seq(inst_, seq);
}

}  // namespace plinth
