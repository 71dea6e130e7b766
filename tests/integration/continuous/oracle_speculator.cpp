// Test plugin (speculator, ABI 1.2): proposes the fake model's own continuation
// (history_model.hpp) with deliberate mistakes, and verifies with spec_decode's verification
// (greedy match / rejection sampling). Drafts are right except where (position + seq) %
// wrong_every == 0, so engine tests see long accepted runs, rejections at every draft position,
// stops inside accepted runs and drafts clamped at max_tokens and the context end.
// Config: {"k": 4, "wrong_every": 3} (wrong_every 0 = never wrong). To break speculator.h on
// purpose for one sequence (the engine must fail it alone, contract_check): "bad_seq": its id and
// "misbehave": "out_of_vocab" (a draft id past the vocabulary), "too_many" (more drafts than the
// row stride), "wrong_count" (a proposal for one sequence more than asked: cannot be pinned on one
// sequence), "accept_past" (more drafts accepted than proposed), "wrong_greedy" (a greedy next
// token that is not the target's argmax).
// Also built against the frozen ABI 1.0 headers (abi_1_0_plugins/): then it has no 1.2 entries
// (the host calls the plain propose and passes verify items at the 1.0 stride) and verifies
// greedily on its own.
#include <nlohmann/json.hpp>
#include <plinth/speculator.hpp>

#include <algorithm>
#include <random>
#include <string>
#include <vector>

#include "history_model.hpp"
#if PLINTH_ABI_MINOR >= 2
#include "rejection_sampler.hpp"
#endif

namespace {

using plinth::sdk::Error;

class OracleSpeculator {
 public:
  explicit OracleSpeculator(const plinth_create_args& a) {
    if (a.model == nullptr) throw Error(PLINTH_ERR_INVALID_ARGUMENT, "oracle: no model");
    vocab_ = a.model->config.vocab_size;
    auto c = nlohmann::json::parse(a.config_json != nullptr ? a.config_json : "{}");
    k_ = c.value("k", 4u);
    wrong_every_ = c.value("wrong_every", 3u);
    bad_seq_ = c.value("bad_seq", plinth_seq_id{0});
    misbehave_ = c.value("misbehave", std::string("none"));
    stats_.struct_size = sizeof(stats_);
  }
  plinth_spec_proposal propose(std::span<const plinth_spec_seq> seqs, uint32_t max_draft) {
    std::vector<uint32_t> limits(seqs.size(), max_draft);
    return run(seqs, limits);
  }
#if PLINTH_ABI_MINOR >= 2
  uint32_t num_lookahead_slots(uint32_t) {
    return k_;
  }
  plinth_spec_proposal propose_batch(const plinth_spec_propose_args& a) {
    return run({a.seqs, a.num_seqs}, {a.max_draft, a.num_seqs});
  }
#endif
  void verify(std::span<const plinth_spec_verify> items, std::span<uint32_t> accepted,
              std::span<int32_t> next) {
    for (size_t i = 0; i < items.size(); ++i) {
#if PLINTH_ABI_MINOR >= 2
      auto fallback = [this] { return std::uniform_real_distribution<double>(0, 1)(rng_); };
      const auto v = plinth::spec_decode::verify_item(items[i], fallback);
      accepted[i] = v.accepted;
      next[i] = v.next_token;
      stats_.num_drafts++;
#else
      if (items[i].target_probs != nullptr) throw Error(PLINTH_ERR_UNSUPPORTED, "greedy only");
      uint32_t a = 0;
      while (a < items[i].num_draft && items[i].draft_tokens[a] == items[i].target_tokens[a]) ++a;
      accepted[i] = a;
      next[i] = items[i].target_tokens[a];
#endif
      if (items[i].seq == bad_seq_ && misbehave_ == "accept_past") {
        accepted[i] = items[i].num_draft + 1;
      }
      if (items[i].seq == bad_seq_ && misbehave_ == "wrong_greedy") {
        next[i] = (next[i] + 1) % static_cast<int32_t>(vocab_);
      }
      stats_.num_draft_tokens += items[i].num_draft;
      stats_.num_accepted_tokens += accepted[i];
    }
  }
  void release_seq(plinth_seq_id seq) {
    released_.push_back(seq);
  }
  plinth_spec_stats stats() {
    return stats_;
  }

 private:
  plinth_spec_proposal run(std::span<const plinth_spec_seq> seqs,
                           std::span<const uint32_t> limits) {
    const uint32_t stride = std::max<uint32_t>(1, k_);
    num_.assign(seqs.size(), 0);
    tokens_.assign(seqs.size() * stride, 0);
    for (size_t i = 0; i < seqs.size(); ++i) {
      std::vector<int32_t> t(seqs[i].tokens, seqs[i].tokens + seqs[i].num_tokens);
      const uint32_t n = std::min(limits[i], k_);
      for (uint32_t j = 0; j < n; ++j) {
        const size_t w = std::min<size_t>(t.size(), plinth_test::kHistoryWindow);
        const auto pos = static_cast<uint32_t>(t.size() - 1);
        int32_t next = plinth_test::next_token({t.data() + t.size() - w, w}, pos, vocab_);
        if (wrong_every_ != 0 && (pos + seqs[i].seq) % wrong_every_ == 0) {
          next = (next + 1) % static_cast<int32_t>(vocab_);
        }
        tokens_[i * stride + j] = next;
        t.push_back(next);
      }
      num_[i] = n;
      if (seqs[i].seq == bad_seq_ && n > 0 && misbehave_ == "out_of_vocab") {
        tokens_[i * stride + n - 1] = static_cast<int32_t>(vocab_);
      }
      if (seqs[i].seq == bad_seq_ && misbehave_ == "too_many") num_[i] = stride + 1;
      if (seqs[i].seq == bad_seq_ && misbehave_ == "wrong_count") extra_ = 1;
    }
    plinth_spec_proposal p{};
    p.struct_size = sizeof(p);
    p.num_seqs = static_cast<uint32_t>(seqs.size()) + extra_;
    extra_ = 0;
    p.max_draft = stride;
    p.num_draft = num_.data();
    p.draft_tokens = tokens_.data();
    return p;
  }

  uint32_t vocab_ = 0, k_ = 4, wrong_every_ = 3, extra_ = 0;
  plinth_seq_id bad_seq_ = 0;
  std::string misbehave_;
  std::vector<uint32_t> num_;
  std::vector<int32_t> tokens_;
  std::vector<plinth_seq_id> released_;
  plinth_spec_stats stats_{};
  std::mt19937_64 rng_{7};
};

const char* const kSchema = R"({"type": "object", "additionalProperties": false, "properties": {
  "k": {"type": "integer", "minimum": 0, "maximum": 16, "default": 4},
  "wrong_every": {"type": "integer", "minimum": 0, "default": 3},
  "bad_seq": {"type": "integer", "minimum": 0, "default": 0},
  "misbehave": {"type": "string", "enum": ["none", "out_of_vocab", "too_many", "wrong_count",
                "accept_past", "wrong_greedy"], "default": "none"}}})";

const plinth_speculator_vtable kTable = plinth::sdk::speculator_vtable<OracleSpeculator>();

}  // namespace

PLINTH_PLUGIN("oracle_speculator", "0.1.0", PLINTH_KIND_SPECULATOR,
              "test speculator: the fake model's continuation with deliberate mistakes", kSchema,
              &kTable)
