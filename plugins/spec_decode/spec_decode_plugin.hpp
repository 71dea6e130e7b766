// spec_decode — the speculator instance: one proposer chosen by config.method (ngram, draft,
// layer_skip), the draft policy (draft-length schedule by batch size, per-sequence acceptance),
// and verification (greedy match, or modified rejection sampling against the target's
// distribution). plinth::sdk::speculator_vtable<SpecDecodePlugin>() makes the C table (entry.cpp).
// Thread rules: one thread at a time (the ABI's default).
#pragma once

#include <plinth/speculator.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <random>
#include <span>
#include <unordered_map>
#include <vector>

#include "draft_policy.hpp"
#include "model_proposer.hpp"
#include "spec_config.hpp"

namespace plinth::spec_decode {

class SpecDecodePlugin {
 public:
  /// Parses args.config_json; wires the proposer the method needs. std::invalid_argument (the
  /// host reports INVALID_ARGUMENT) naming the option and the fix for a config or pipeline that
  /// cannot work: min_n > max_n, exit_layer not below the layer count, layer_skip without the
  /// backend extension, draft without a draft backend or with another vocabulary.
  explicit SpecDecodePlugin(const plinth_create_args& args);

  uint32_t num_lookahead_slots(uint32_t num_running);
  plinth_spec_proposal propose(std::span<const plinth_spec_seq> seqs, uint32_t max_draft);
  plinth_spec_proposal propose_batch(const plinth_spec_propose_args& args);
  void verify(std::span<const plinth_spec_verify> items, std::span<uint32_t> accepted,
              std::span<int32_t> next_token);
  void release_seq(plinth_seq_id seq);
  plinth_spec_stats stats() const;

  const SpecConfig& config() const { return config_; }

 private:
  plinth_spec_proposal run(std::span<const plinth_spec_seq> seqs, std::span<const uint32_t> limits,
                           uint32_t batch_size);

  SpecConfig config_;
  std::optional<LayerSkipProposer> layer_skip_;
  std::optional<DraftModelProposer> draft_;
  std::unique_ptr<DraftPolicy> policy_;
  std::mt19937_64 rng_{0x5eed};  // only when a host passes no uniforms
  // Proposal arrays handed out until the next propose.
  std::vector<uint32_t> num_draft_;
  std::vector<int32_t> draft_tokens_;
  plinth_spec_stats stats_{};
};

}  // namespace plinth::spec_decode
