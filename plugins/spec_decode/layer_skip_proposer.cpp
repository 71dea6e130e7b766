#include <plinth/plugin.hpp>

#include <algorithm>
#include <stdexcept>
#include <string>

#include "model_proposer.hpp"

namespace plinth::spec_decode {

LayerSkipProposer::LayerSkipProposer(plinth_backend_ref backend, plinth_kv_cache_ref kv,
                                     uint32_t exit_layer)
    : backend_(backend), kv_(kv), exit_layer_(exit_layer) {
  if (backend_.vtable == nullptr || kv_.vtable == nullptr) {
    throw std::invalid_argument(
        "spec_decode: method layer_skip needs the backend and the kv_cache (a host of ABI >= 1.2 "
        "passes both)");
  }
  const plinth_lifecycle& l = backend_.vtable->lifecycle;
  if (l.get_extension != nullptr) {
    ext_ = static_cast<const plinth_early_exit_ext*>(
        l.get_extension(backend_.instance, PLINTH_EXT_EARLY_EXIT));
  }
  if (ext_ == nullptr || ext_->num_layers == nullptr || ext_->forward_early_exit == nullptr) {
    throw std::invalid_argument(
        "spec_decode: config.method \"layer_skip\" needs a backend offering the extension \"" +
        std::string(PLINTH_EXT_EARLY_EXIT) +
        "\", and this backend does not: use backend_cpu, or method \"ngram\" or \"draft\"");
  }
  num_layers_ = ext_->num_layers(backend_.instance);
  if (exit_layer_ == 0) exit_layer_ = num_layers_ / 2;
  if (exit_layer_ < 1 || exit_layer_ >= num_layers_) {
    throw std::invalid_argument("spec_decode: config.exit_layer = " + std::to_string(exit_layer) +
                                " must be in [1, " + std::to_string(num_layers_) +
                                ") (the model has " + std::to_string(num_layers_) +
                                " layers), or 0 for half of them");
  }
  plinth_kv_info info{};
  info.struct_size = sizeof(info);
  plinth_error err = sdk::new_error();
  sdk::check_call(kv_.vtable->get_info(kv_.instance, &info, &err), err,
                  "spec_decode: kv_cache.get_info");
  block_size_ = info.block_size;
}

void LayerSkipProposer::propose(std::span<const DraftJob> jobs,
                                std::vector<std::vector<int32_t>>& drafts) {
  drafts.assign(jobs.size(), {});
  std::vector<std::span<const int32_t>> tables(jobs.size());
  uint32_t max_k = 0;
  plinth_error err = sdk::new_error();
  for (size_t i = 0; i < jobs.size(); ++i) {
    const int32_t* blocks = nullptr;
    uint32_t n = 0;
    sdk::check_call(kv_.vtable->get_block_table(kv_.instance, jobs[i].seq, &blocks, &n, &err), err,
                    "spec_decode: kv_cache.get_block_table");
    // Never write past the slots the sequence holds (the scheduler reserved them).
    const size_t len = jobs[i].tokens.size();
    const size_t room = size_t{n} * block_size_ >= len ? size_t{n} * block_size_ - (len - 1) : 0;
    tables[i] = {blocks, n};
    if (room < jobs[i].k) throw std::logic_error("spec_decode: fewer slots than max_draft");
    max_k = std::max(max_k, jobs[i].k);
  }
  // Draft position j computes the token at position len - 1 + j (the last token, then drafts).
  for (uint32_t j = 0; j < max_k; ++j) {
    batch_.clear(block_size_);
    std::vector<size_t> rows;
    for (size_t i = 0; i < jobs.size(); ++i) {
      if (jobs[i].k <= j) continue;
      const size_t len = jobs[i].tokens.size();
      const int32_t token = j == 0 ? jobs[i].tokens[len - 1] : drafts[i][j - 1];
      batch_.add({&token, 1}, static_cast<uint32_t>(len - 1 + j), tables[i]);
      rows.push_back(i);
    }
    plinth_forward_output out{};
    out.struct_size = sizeof(out);
    sdk::check_call(
        ext_->forward_early_exit(backend_.instance, &batch_.view(), exit_layer_, &out, &err), err,
        "spec_decode: backend.forward_early_exit");
    const std::vector<int32_t> next = argmax_rows(out);
    for (size_t r = 0; r < rows.size(); ++r) drafts[rows[r]].push_back(next[r]);
  }
}

}  // namespace plinth::spec_decode
