// Test support: the built backend_cpu plugin library loaded through its C ABI (dlopen +
// plinth_plugin_entry), and a builder of plinth_batch values from per-sequence steps.
#pragma once

#include <dlfcn.h>

#include <algorithm>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "plinth/plinth.h"

namespace harness {

/// One loaded copy of libplinth_backend_cpu.so.
class Library {
 public:
  Library() {
    const std::string path = std::string(PLINTH_PLUGIN_DIR) + "/libplinth_backend_cpu.so";
    handle_ = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (handle_ == nullptr) throw std::runtime_error("dlopen " + path + ": " + dlerror());
    auto entry =
        reinterpret_cast<plinth_plugin_entry_fn>(dlsym(handle_, PLINTH_PLUGIN_ENTRY_SYMBOL));
    if (entry == nullptr) throw std::runtime_error("no plinth_plugin_entry in " + path);
    desc_ = entry();
    vt_ = static_cast<const plinth_backend_vtable*>(desc_->vtable);
  }
  ~Library() {
    if (handle_ != nullptr) dlclose(handle_);
  }
  Library(const Library&) = delete;
  Library& operator=(const Library&) = delete;
  const plinth_plugin_descriptor& descriptor() const { return *desc_; }
  const plinth_backend_vtable& vt() const { return *vt_; }

 private:
  void* handle_ = nullptr;
  const plinth_plugin_descriptor* desc_ = nullptr;
  const plinth_backend_vtable* vt_ = nullptr;
};

inline plinth_error make_error() {
  plinth_error e{};
  e.struct_size = sizeof(e);
  return e;
}

/// An instance of the plugin; throws std::runtime_error with the plugin's message on failure.
class Backend {
 public:
  Backend(const Library& lib, const plinth_model_desc& model, const std::string& config = "{}")
      : vt_(lib.vt()) {
    plinth_create_args a{};
    a.struct_size = sizeof(a);
    a.instance_name = "backend";
    a.config_json = config.c_str();
    a.model = &model;
    plinth_error e = make_error();
    check(vt_.lifecycle.create(&a, &inst_, &e), e);
  }
  ~Backend() { vt_.lifecycle.destroy(inst_); }
  Backend(const Backend&) = delete;
  Backend& operator=(const Backend&) = delete;

  plinth_instance* inst() const { return inst_; }
  const plinth_backend_vtable& vt() const { return vt_; }
  void allocate(uint32_t blocks, uint32_t block_size) {
    plinth_error e = make_error();
    check(vt_.allocate_kv(inst_, blocks, block_size, &e), e);
  }
  /// logits [num_logits][vocab].
  std::vector<std::vector<float>> forward(const plinth_batch& b) {
    plinth_error e = make_error();
    plinth_forward_output out{};
    check(vt_.forward(inst_, &b, &out, &e), e);
    return rows(out);
  }
  /// Status and message of a forward expected to fail (status OK when it did not).
  std::pair<int32_t, std::string> forward_status(const plinth_batch& b) {
    plinth_error e = make_error();
    plinth_forward_output out{};
    const int32_t st = vt_.forward(inst_, &b, &out, &e);
    return {st, st == PLINTH_OK ? "" : e.message};
  }

  /// The plinth.early_exit/1 table (lifecycle.get_extension); throws when absent.
  const plinth_early_exit_ext& early_exit() const {
    const void* ext = vt_.lifecycle.get_extension == nullptr
                          ? nullptr
                          : vt_.lifecycle.get_extension(inst_, PLINTH_EXT_EARLY_EXIT);
    if (ext == nullptr) throw std::runtime_error("no " PLINTH_EXT_EARLY_EXIT " extension");
    return *static_cast<const plinth_early_exit_ext*>(ext);
  }
  /// logits [num_logits][vocab] of the model cut after `exit_layer` layers.
  std::vector<std::vector<float>> forward_early_exit(const plinth_batch& b, uint32_t exit_layer) {
    plinth_error e = make_error();
    plinth_forward_output out{};
    out.struct_size = sizeof(out);
    check(early_exit().forward_early_exit(inst_, &b, exit_layer, &out, &e), e);
    return rows(out);
  }
  /// Status and message of a forward_early_exit expected to fail (status OK when it did not).
  std::pair<int32_t, std::string> early_exit_status(const plinth_batch& b, uint32_t exit_layer) {
    plinth_error e = make_error();
    plinth_forward_output out{};
    out.struct_size = sizeof(out);
    const int32_t st = early_exit().forward_early_exit(inst_, &b, exit_layer, &out, &e);
    return {st, st == PLINTH_OK ? "" : e.message};
  }

  static std::vector<std::vector<float>> rows(const plinth_forward_output& out) {
    std::vector<std::vector<float>> r(out.num_logits);
    for (uint32_t i = 0; i < out.num_logits; ++i) {
      r[i].assign(out.logits + static_cast<size_t>(i) * out.vocab_size,
                  out.logits + static_cast<size_t>(i + 1) * out.vocab_size);
    }
    return r;
  }

  static void check(int32_t st, const plinth_error& e) {
    if (st != PLINTH_OK)
      throw std::runtime_error("status " + std::to_string(st) + ": " + e.message);
  }

 private:
  const plinth_backend_vtable& vt_;
  plinth_instance* inst_ = nullptr;
};

/// One sequence's part of a step: its physical blocks, how many tokens are cached already, the
/// new tokens, and whether every new token's logits are wanted (else only the last's).
struct SeqStep {
  std::vector<int32_t> blocks;
  int32_t cached = 0;
  std::vector<int32_t> tokens;
  bool all_logits = false;
};

/// Owns the arrays of a plinth_batch built from steps.
class BatchBuilder {
 public:
  BatchBuilder(const std::vector<SeqStep>& steps, uint32_t block_size) {
    uint32_t max_blocks = 1;
    for (const SeqStep& s : steps) max_blocks = std::max<uint32_t>(max_blocks, s.blocks.size());
    query_start.push_back(0);
    for (const SeqStep& s : steps) {
      for (size_t k = 0; k < s.tokens.size(); ++k) {
        const int32_t pos = s.cached + static_cast<int32_t>(k);
        if (s.all_logits || k + 1 == s.tokens.size()) {
          logits_indices.push_back(static_cast<int32_t>(token_ids.size()));
        }
        token_ids.push_back(s.tokens[k]);
        positions.push_back(pos);
        slot_mapping.push_back(s.blocks.at(static_cast<size_t>(pos) / block_size) *
                                   static_cast<int32_t>(block_size) +
                               pos % static_cast<int32_t>(block_size));
      }
      query_start.push_back(static_cast<int32_t>(token_ids.size()));
      seq_lens.push_back(s.cached + static_cast<int32_t>(s.tokens.size()));
      for (uint32_t j = 0; j < max_blocks; ++j) {
        block_tables.push_back(j < s.blocks.size() ? s.blocks[j] : -1);
      }
    }
    batch.struct_size = sizeof(batch);
    batch.num_tokens = static_cast<uint32_t>(token_ids.size());
    batch.num_seqs = static_cast<uint32_t>(steps.size());
    batch.max_blocks_per_seq = max_blocks;
    batch.block_size = block_size;
    batch.num_logits = static_cast<uint32_t>(logits_indices.size());
    point();
  }
  /// Re-points the batch at the (possibly edited) arrays.
  void point() {
    batch.token_ids = token_ids.data();
    batch.positions = positions.data();
    batch.query_start = query_start.data();
    batch.seq_lens = seq_lens.data();
    batch.block_tables = block_tables.data();
    batch.slot_mapping = slot_mapping.data();
    batch.logits_indices = logits_indices.data();
  }

  std::vector<int32_t> token_ids, positions, query_start, seq_lens, block_tables, slot_mapping,
      logits_indices;
  plinth_batch batch{};
};

}  // namespace harness
