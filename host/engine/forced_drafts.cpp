#include "engine/forced_drafts.hpp"

#include <algorithm>
#include <exception>
#include <span>
#include <string_view>

#include "engine/grammar.hpp"
#include "engine/sequence.hpp"
#include "tokenizer/tokenizer.hpp"

namespace plinth {

namespace {

// The most forced bytes asked of the grammar per sequence and step: far more than max_drafts
// tokens ever cover.
constexpr size_t kMaxForcedBytes = 512;

// The memo's bounds: forced strings remembered (a few schemas' worth of property names and
// punctuation), and the most tokens kept for one (a spelling of kMaxForcedBytes bytes needs more
// only with tokens under 8 bytes on average; longer ones are not remembered). At most about
// 1024 * (512 + 4 * 128) bytes = 1 MiB of payload.
constexpr size_t kMemoEntries = 1024;
constexpr size_t kMemoMaxTokens = 128;

// The length of `s` without an incomplete UTF-8 character at its end (the grammar forces bytes,
// which may stop inside a character; the tokenizer takes whole characters).
size_t complete_utf8_prefix(std::string_view s) {
  size_t i = s.size();
  size_t continuation = 0;
  while (i > 0 && continuation < 3 && (static_cast<unsigned char>(s[i - 1]) & 0xC0) == 0x80) {
    --i;
    ++continuation;
  }
  if (i == 0) return 0;  // empty, or continuation bytes only
  const auto lead = static_cast<unsigned char>(s[i - 1]);
  size_t need = 1;
  if ((lead & 0xE0) == 0xC0) need = 2;
  if ((lead & 0xF0) == 0xE0) need = 3;
  if ((lead & 0xF8) == 0xF0) need = 4;
  return continuation + 1 >= need ? s.size() : i - 1;
}

// A draw from `p` with token `skip` left out, renormalised, by inverse CDF at uniform `u`.
int32_t draw_without(std::span<const float> p, size_t skip, double u) {
  double total = 0;
  for (size_t t = 0; t < p.size(); ++t) total += t == skip ? 0.0 : double(p[t]);
  const double target = u * total;
  double cum = 0;
  size_t last = skip;
  for (size_t t = 0; t < p.size(); ++t) {
    if (t == skip || p[t] <= 0) continue;
    cum += p[t];
    last = t;
    if (cum > target) return static_cast<int32_t>(t);
  }
  return static_cast<int32_t>(last);  // rounding: the last token with mass
}

// A draw from `p` by inverse CDF at uniform `u`.
int32_t draw(std::span<const float> p, double u) {
  return draw_without(p, p.size(), u);
}

}  // namespace

ForcedDrafts::ForcedDrafts(const Tokenizer& tokenizer, uint32_t vocab_size, uint32_t context_length,
                           uint32_t max_drafts)
    : tokenizer_(tokenizer),
      vocab_(vocab_size),
      context_length_(context_length),
      max_drafts_(std::max(1u, max_drafts)),
      memo_(kMemoEntries, kMaxForcedBytes, kMemoMaxTokens) {}

void ForcedDrafts::learn(Sequence& seq) {
  SequenceGrammar* grammar = seq.grammar();
  if (grammar == nullptr || !grammar->forced_note()) return;
  const SequenceGrammar::ForcedNote& note = *grammar->forced_note();
  const std::span<const int32_t> out = seq.output();
  if (out.size() <= note.output_pos) return;
  std::vector<std::string_view> pieces;
  size_t covered = 0;
  for (size_t i = note.output_pos; i < out.size() && covered < note.bytes.size(); ++i) {
    if (out[i] < 0 || static_cast<uint32_t>(out[i]) >= vocab_) break;
    pieces.push_back(tokenizer_.token_to_bytes(out[i]));
    covered += pieces.back().size();
  }
  if (covered < note.bytes.size()) return;  // not spelled out yet
  // record() ignores a spelling that does not match (a stop token, say): nothing to learn.
  memo_.record(note.bytes, out.subspan(note.output_pos, pieces.size()), pieces);
  grammar->forced_note().reset();
}

std::vector<int32_t> ForcedDrafts::forced_tokens(Sequence& seq, uint32_t limit) {
  learn(seq);
  std::string bytes = seq.grammar_forced_bytes(kMaxForcedBytes);
  bytes.resize(complete_utf8_prefix(bytes));
  if (bytes.empty() || limit == 0) return {};
  SequenceGrammar* grammar = seq.grammar();
  if (grammar != nullptr && !grammar->forced_note()) {
    grammar->forced_note() = SequenceGrammar::ForcedNote{bytes, seq.output().size()};
  }
  std::vector<int32_t> tokens;
  // A seeded sampled request drafts the canonical encoding only: which drafts it is offered
  // decides how many draws its verification takes from its RNG, so drafts that depend on other
  // requests (the memo) would make its output depend on them. Greedy output never depends on the
  // drafts, an unseeded one need not repeat.
  const bool memo_ok = seq.greedy() || !seq.seeded();
  if (const std::vector<int32_t>* known = memo_ok ? memo_.find(bytes) : nullptr) {
    tokens = *known;  // how the target spelled these bytes last time
    ++memo_proposals_;
  } else {
    try {
      tokens = tokenizer_.encode(bytes, /*add_special=*/false);
    } catch (const std::invalid_argument&) {
      return {};  // bytes the vocabulary cannot spell: nothing to draft
    }
  }
  std::erase_if(tokens, [this](int32_t t) { return t < 0 || static_cast<uint32_t>(t) >= vocab_; });
  // The last token ends where the forced bytes end, and the model often spells that boundary with
  // a token reaching into the free bytes after it (`":` where `"` is forced): it is drafted all
  // the same (measured on SmolLM2 with the test's schema: 264 forwards with it, 269 without; a
  // rejected draft costs a row of the forward, not a step).
  if (tokens.size() > limit) tokens.resize(limit);
  // A tokenizer that adds what the grammar does not force (a SentencePiece space prefix) is cut
  // where the grammar refuses it.
  tokens.resize(seq.grammar_valid_prefix(tokens));
  return tokens;
}

void ForcedDrafts::propose(std::vector<BatchBuilder::Entry>& entries) {
  for (BatchBuilder::Entry& e : entries) {
    if (!e.drafts.empty() || !e.seq->constrained()) continue;
    const uint32_t limit = std::min(draft_room(e, context_length_), max_drafts_);
    if (limit == 0) continue;
    std::vector<int32_t> tokens;
    try {
      tokens = forced_tokens(*e.seq, limit);
    } catch (const GrammarContractError&) {
      continue;  // the sampling step asks the plugin again and fails the sequence there
    }
    if (tokens.empty()) continue;
    e.num_new = 1 + static_cast<uint32_t>(tokens.size());
    e.drafts = std::move(tokens);
    e.draft_probs.clear();
    e.forced = true;
  }
}

Verdict ForcedDrafts::verify(const BatchBuilder::Entry& e, const float* first_row) {
  Sequence& seq = *e.seq;
  const std::span<const int32_t> drafts(e.drafts);
  Verdict v;
  try {
    for (size_t j = 0;; ++j) {
      const std::span<const float> row(first_row + j * vocab_, vocab_);
      if (seq.greedy()) {
        // Position j's masked target argmax, penalties counting drafts 0..j-1 as accepted.
        const int32_t t = seq.greedy_token(row, drafts.first(j));
        if (j == drafts.size() || t != drafts[j]) {  // the bonus token, or the correction
          v.next_token = t;
          break;
        }
        ++v.accepted;
        continue;
      }
      // Position j's masked target distribution, penalties counting drafts 0..j-1 as accepted.
      const std::vector<float> p = seq.distribution(row, drafts.first(j));
      if (j == drafts.size()) {  // every draft kept: the bonus token
        v.next_token = draw(p, seq.uniform());
        break;
      }
      const auto d = static_cast<size_t>(drafts[j]);
      if (seq.uniform() >= double(p[d])) {  // kept with probability p(d)
        v.next_token = draw_without(p, d, seq.uniform());
        break;
      }
      ++v.accepted;
    }
  } catch (const NonFiniteLogits& bad) {
    v = Verdict{};
    v.failure = bad;
    return v;
  } catch (const GrammarContractError& bad) {
    v = Verdict{};
    v.grammar_failure = bad.what();
    return v;
  }
  count_verified(stats_, static_cast<uint32_t>(drafts.size()), v.accepted);
  return v;
}

}  // namespace plinth
