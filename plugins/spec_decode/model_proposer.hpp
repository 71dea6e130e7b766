// spec_decode — proposers that run a model to draft: greedy autoregressive drafting, batched over
// the sequences of a step (one forward per draft position). Their drafts are deterministic (the
// draft model's argmax), so verification treats the draft distribution as one-hot: exact at any
// temperature, at the price of a lower acceptance than drafting by sampling when T > 0.
//  - LayerSkipProposer: the target's own first exit_layer layers, through the backend extension
//    plinth.early_exit/1, attending over the target's KV (its early layers are exactly what the
//    truncated model computes) and writing early-layer K/V only into the slots the scheduler
//    reserved for this step's verification, which rewrites them.
//  - DraftModelProposer: a second, smaller model on its own backend instance with its own KV
//    pool and block tables, kept in step with each sequence's tokens (longest common prefix).
#pragma once

#include <plinth/ext_early_exit.h>
#include <plinth/plinth.h>

#include <cstdint>
#include <span>
#include <unordered_map>
#include <vector>

namespace plinth::spec_decode {

/// One sequence to draft for: its tokens (the last one not yet computed by the target) and the
/// most drafts wanted.
struct DraftJob {
  plinth_seq_id seq;
  std::span<const int32_t> tokens;
  uint32_t k;
};

/// Builds plinth_batch arrays of single-sequence rows. Reused across calls.
class FlatBatch {
 public:
  /// Starts an empty batch over KV blocks of `block_size` tokens.
  void clear(uint32_t block_size);
  /// Adds a sequence computing `tokens` at positions start.. with `block_table`; logits for its
  /// last token.
  void add(std::span<const int32_t> tokens, uint32_t start, std::span<const int32_t> block_table);
  /// The batch over the rows added since clear(); valid until the next clear/add/view.
  /// `block_table` entries must cover every added position (the callers reserve them).
  const plinth_batch& view();

 private:
  uint32_t block_size_ = 0;
  size_t max_blocks_ = 0;
  std::vector<int32_t> ids_, pos_, qs_, lens_, slots_, logits_;
  std::vector<std::vector<int32_t>> tables_;
  std::vector<int32_t> flat_tables_;
  plinth_batch batch_{};
};

/// Argmax of each logits row ([rows, vocab]); lowest id on ties.
std::vector<int32_t> argmax_rows(const plinth_forward_output& out);

class LayerSkipProposer {
 public:
  /// Throws std::invalid_argument naming config.exit_layer / the backend when the extension is
  /// missing or exit_layer is not in [1, layers).
  LayerSkipProposer(plinth_backend_ref backend, plinth_kv_cache_ref kv, uint32_t exit_layer);
  /// drafts[i] receives up to jobs[i].k tokens.
  void propose(std::span<const DraftJob> jobs, std::vector<std::vector<int32_t>>& drafts);
  uint32_t exit_layer() const { return exit_layer_; }
  uint32_t num_layers() const { return num_layers_; }

 private:
  plinth_backend_ref backend_;
  plinth_kv_cache_ref kv_;
  const plinth_early_exit_ext* ext_ = nullptr;
  uint32_t exit_layer_;
  uint32_t num_layers_ = 0;
  uint32_t block_size_ = 0;
  FlatBatch batch_;
};

class DraftModelProposer {
 public:
  /// Allocates the draft backend's KV: kv_tokens tokens in blocks of 16. Throws
  /// std::invalid_argument (no draft backend, vocabularies differ) or sdk::Error.
  DraftModelProposer(plinth_backend_ref draft, const plinth_model_desc& draft_model,
                     const plinth_model_desc& target_model, uint32_t kv_tokens);
  void propose(std::span<const DraftJob> jobs, std::vector<std::vector<int32_t>>& drafts);
  void release(plinth_seq_id seq);
  uint32_t num_layers() const { return num_layers_; }
  /// Blocks of the draft KV not held by any sequence (tests: nothing leaks).
  size_t num_free_blocks() const { return free_.size(); }

 private:
  struct SeqState {
    std::vector<int32_t> cached;  // tokens whose K/V the draft cache holds, positions 0..
    std::vector<int32_t> blocks;  // draft block table
    uint64_t last_used = 0;
  };
  /// Grows `s` to hold `tokens` positions; evicts least recently used sequences not in `busy`.
  bool reserve(SeqState& s, size_t tokens, std::span<const DraftJob> busy);

  plinth_backend_ref draft_;
  uint32_t num_layers_;
  static constexpr uint32_t kBlockSize = 16;
  std::vector<int32_t> free_;
  std::unordered_map<plinth_seq_id, SeqState> seqs_;
  uint64_t clock_ = 0;
  FlatBatch batch_;
};

}  // namespace plinth::spec_decode
