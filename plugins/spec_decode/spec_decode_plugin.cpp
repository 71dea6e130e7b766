#include "spec_decode_plugin.hpp"

#include <plinth/abi.h>

#include <algorithm>
#include <stdexcept>
#include <string>

#include "ngram_proposer.hpp"
#include "rejection_sampler.hpp"

namespace plinth::spec_decode {

SpecDecodePlugin::SpecDecodePlugin(const plinth_create_args& args)
    : config_(parse_config(args.config_json != nullptr ? args.config_json : "")) {
  double draft_cost = 0.0;  // ngram: a lookup, no model
  switch (config_.method) {
    case Method::kNgram:
      break;
    case Method::kLayerSkip: {
      const plinth_kv_cache_ref kv = args.kv_cache;
      layer_skip_.emplace(args.backend, kv, config_.exit_layer);
      draft_cost = double(layer_skip_->exit_layer()) / double(layer_skip_->num_layers());
      break;
    }
    case Method::kDraft: {
      // NOLINTNEXTLINE(bugprone-sizeof-expression): the ABI macro sizes the pointer field itself
      const bool has = PLINTH_HAS_FIELD(&args, plinth_create_args, draft_model);
      if (!has || args.draft_backend.vtable == nullptr || args.draft_model == nullptr) {
        throw std::invalid_argument(
            "spec_decode: config.method \"draft\" needs a draft backend: add a plugins[] entry "
            "{\"kind\": \"backend\", \"role\": \"draft\", \"library\": \"backend_cpu\", \"model\": "
            "\"<draft.gguf>\"} to the manifest (`plinth draft-model` makes one from the target), "
            "or use method \"ngram\" or \"layer_skip\"");
      }
      if (args.model == nullptr) throw std::invalid_argument("spec_decode: no target model");
      draft_.emplace(args.draft_backend, *args.draft_model, *args.model, config_.draft_kv_tokens);
      draft_cost = double(draft_->num_layers()) / double(std::max(1u, args.model->config.n_layers));
      break;
    }
  }
  if (config_.draft_token_cost >= 0) draft_cost = config_.draft_token_cost;
  policy_ = std::make_unique<DraftPolicy>(config_, draft_cost);
  stats_.struct_size = sizeof(stats_);
}

uint32_t SpecDecodePlugin::num_lookahead_slots(uint32_t num_running) {
  return policy_->k_for_batch(std::max(1u, num_running));
}

plinth_spec_proposal SpecDecodePlugin::propose(std::span<const plinth_spec_seq> seqs,
                                               uint32_t max_draft) {
  std::vector<uint32_t> limits(seqs.size(), max_draft);
  return run(seqs, limits, static_cast<uint32_t>(seqs.size()));
}

plinth_spec_proposal SpecDecodePlugin::propose_batch(const plinth_spec_propose_args& args) {
  if (args.num_seqs > 0 && (args.seqs == nullptr || args.max_draft == nullptr)) {
    throw std::invalid_argument("propose_batch: seqs and max_draft are required");
  }
  return run({args.seqs, args.num_seqs}, {args.max_draft, args.num_seqs}, args.batch_size);
}

plinth_spec_proposal SpecDecodePlugin::run(std::span<const plinth_spec_seq> seqs,
                                           std::span<const uint32_t> limits, uint32_t batch_size) {
  const uint32_t k_step = policy_->k_for_batch(std::max<uint32_t>(1, batch_size));
  std::vector<DraftJob> jobs(seqs.size());
  uint32_t stride = 0;
  for (size_t i = 0; i < seqs.size(); ++i) {
    const uint32_t limit = std::min(limits[i], k_step);
    jobs[i] = {
        seqs[i].seq, {seqs[i].tokens, seqs[i].num_tokens}, policy_->k_for_seq(seqs[i].seq, limit)};
    stride = std::max(stride, jobs[i].k);
  }
  std::vector<std::vector<int32_t>> drafts(seqs.size());
  if (stride > 0) {
    switch (config_.method) {
      case Method::kNgram:
        for (size_t i = 0; i < jobs.size(); ++i) {
          drafts[i] = ngram_propose(jobs[i].tokens, config_.min_n, config_.max_n, jobs[i].k);
        }
        break;
      case Method::kLayerSkip:
        layer_skip_->propose(jobs, drafts);
        break;
      case Method::kDraft:
        draft_->propose(jobs, drafts);
        break;
    }
  }
  num_draft_.assign(seqs.size(), 0);
  draft_tokens_.assign(seqs.size() * stride, 0);
  for (size_t i = 0; i < seqs.size(); ++i) {
    const size_t n = std::min<size_t>(drafts[i].size(), jobs[i].k);
    num_draft_[i] = static_cast<uint32_t>(n);
    std::copy_n(drafts[i].begin(), n, draft_tokens_.begin() + i * stride);
  }
  plinth_spec_proposal p{};
  p.struct_size = sizeof(p);
  p.num_seqs = static_cast<uint32_t>(seqs.size());
  p.max_draft = stride;
  p.num_draft = num_draft_.data();
  p.draft_tokens = draft_tokens_.data();
  return p;
}

void SpecDecodePlugin::verify(std::span<const plinth_spec_verify> items,
                              std::span<uint32_t> accepted, std::span<int32_t> next_token) {
  auto fallback = [this] { return static_cast<double>(rng_() >> 11) * 0x1.0p-53; };
  for (size_t i = 0; i < items.size(); ++i) {
    const Verdict v = verify_item(items[i], fallback);
    accepted[i] = v.accepted;
    next_token[i] = v.next_token;
    policy_->observe(items[i].seq, items[i].num_draft, v.accepted);
    if (items[i].num_draft > 0) stats_.num_drafts++;
    stats_.num_draft_tokens += items[i].num_draft;
    stats_.num_accepted_tokens += v.accepted;
  }
}

void SpecDecodePlugin::release_seq(plinth_seq_id seq) {
  policy_->release(seq);
  if (draft_) draft_->release(seq);
}

plinth_spec_stats SpecDecodePlugin::stats() const {
  return stats_;
}

}  // namespace plinth::spec_decode
