// Well-behaved plugins of six kinds for the host's tests: they publish real config schemas, read
// their config and wired dependencies like production plugins, and compute what the host reads at
// `manifest check` (KV layout, memory info, pool geometry). The per-step bookkeeping of the
// kv_cache and scheduler is not theirs to test: those calls answer UNSUPPORTED.
//
// This header compiles against the current SDK and against the frozen ABI 1.0 headers
// (tests/fixtures/abi_1_0, tests/plugins/abi_compat), so one source gives both builds of a plugin.
#pragma once

#include <algorithm>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "plinth/backend.hpp"
#include "plinth/graph_runner.hpp"
#include "plinth/kv_cache.hpp"
#include "plinth/plugin.hpp"
#include "plinth/prefix_cache.hpp"
#include "plinth/scheduler.hpp"
#include "plinth/speculator.hpp"

namespace plinth_test {

using plinth::sdk::Error;

inline nlohmann::json config_of(const plinth_create_args& a) {
  return nlohmann::json::parse(a.config_json != nullptr ? a.config_json : "{}");
}

[[noreturn]] inline void not_modelled(const char* what) {
  throw Error(PLINTH_ERR_UNSUPPORTED, std::string("test plugin: ") + what + " is not modelled");
}

// --- backend: KV layout from the model (f16 K and V), memory from its config ---------------------
inline const char* const kBackendSchema = R"json({
  "type": "object", "additionalProperties": false,
  "properties": {
    "memory_mib": {"type": "integer", "minimum": 1, "maximum": 1048576, "default": 256,
                   "description": "memory the fake device offers for the KV cache, MiB"},
    "cuda_extension": {"type": "boolean", "default": false,
                       "description": "offer plinth.cuda_stream/1 (all its calls fail)"}
  }})json";

class TestBackend {
 public:
  explicit TestBackend(const plinth_create_args& a) : host_(a.host, a.instance_name) {
    if (a.model == nullptr) throw std::invalid_argument("test_backend: needs a model");
    model_ = a.model->config;
    nlohmann::json c = config_of(a);
    memory_bytes_ = c.at("memory_mib").get<uint64_t>() << 20;
    cuda_ext_ = c.at("cuda_extension").get<bool>();
    host_.info("create backend");
  }
  ~TestBackend() { host_.info("destroy backend"); }
  plinth_kv_layout kv_layout() {
    plinth_kv_layout l{};
    l.n_layers = model_.n_layers;
    l.n_kv_heads = model_.n_kv_heads;
    l.head_dim = model_.head_dim;
    l.dtype = PLINTH_DTYPE_F16;
    l.bytes_per_token = 2ull * l.n_layers * l.n_kv_heads * l.head_dim * 2;  // K,V x f16
    return l;
  }
  plinth_memory_info memory_info() {
    plinth_memory_info m{};
    m.device_kind = PLINTH_DEVICE_CPU;
    m.free_bytes = memory_bytes_;
    m.total_bytes = 2 * memory_bytes_;
    return m;
  }
  void allocate_kv(uint32_t num_blocks, uint32_t block_size) { blocks_ = num_blocks * block_size; }
  // Deterministic fake: the logits of token t peak at (t + 1) % vocab.
  plinth_forward_output forward(const plinth_batch& b) {
    logits_.assign(static_cast<size_t>(b.num_logits) * model_.vocab_size, 0.0f);
    for (uint32_t i = 0; i < b.num_logits; ++i) {
      auto t = static_cast<uint32_t>(b.token_ids[b.logits_indices[i]]);
      logits_[static_cast<size_t>(i) * model_.vocab_size + (t + 1) % model_.vocab_size] = 1.0f;
    }
    plinth_forward_output o{};
    o.num_logits = b.num_logits;
    o.vocab_size = model_.vocab_size;
    o.logits = logits_.data();
    return o;
  }
  void copy_blocks(std::span<const plinth_block_copy>) {}
  const void* extension(const char* name);

 private:
  plinth::sdk::Host host_;
  plinth_model_config model_{};
  uint64_t memory_bytes_ = 0;
  bool cuda_ext_ = false;
  uint64_t blocks_ = 0;
  std::vector<float> logits_;
};

inline const void* TestBackend::extension(const char* name) {
  static const plinth_cuda_stream_ext kExt = {
      sizeof(plinth_cuda_stream_ext),
      [](plinth_instance*) -> void* { return nullptr; },
      [](plinth_instance*, uint32_t, uint32_t, plinth_error* e) {
        return plinth::sdk::set_error(e, PLINTH_ERR_UNSUPPORTED, "test backend has no CUDA");
      },
      [](plinth_instance*, const plinth_batch*, plinth_error* e) {
        return plinth::sdk::set_error(e, PLINTH_ERR_UNSUPPORTED, "test backend has no CUDA");
      },
      [](plinth_instance*, uint32_t, plinth_error* e) {
        return plinth::sdk::set_error(e, PLINTH_ERR_UNSUPPORTED, "test backend has no CUDA");
      },
      [](plinth_instance*, uint32_t, plinth_forward_output*, plinth_error* e) {
        return plinth::sdk::set_error(e, PLINTH_ERR_UNSUPPORTED, "test backend has no CUDA");
      }};
  return cuda_ext_ && std::string(name) == PLINTH_EXT_CUDA_STREAM ? &kExt : nullptr;
}

// --- kv_cache: sizes its pool from the wired backend -------------------------------------------
inline const char* const kKvSchema = R"json({
  "type": "object", "additionalProperties": false,
  "properties": {
    "block_size": {"type": "integer", "x-power-of-two": true, "minimum": 1, "maximum": 256,
                   "default": 16, "description": "tokens per block"},
    "num_blocks": {"type": "integer", "minimum": 1,
                   "description": "pool size; default: memory_fraction of the backend's free memory"},
    "memory_fraction": {"type": "number", "exclusiveMinimum": 0, "maximum": 1, "default": 0.9}
  }})json";

class TestKv {
 public:
  explicit TestKv(const plinth_create_args& a) : host_(a.host, a.instance_name) {
    if (a.backend.vtable == nullptr || a.backend.instance == nullptr) {
      throw std::invalid_argument("test_kv: needs the backend");
    }
    nlohmann::json c = config_of(a);
    plinth_kv_layout l{};
    plinth_memory_info m{};
    plinth_error e{};
    if (a.backend.vtable->get_kv_layout(a.backend.instance, &l, &e) != PLINTH_OK ||
        a.backend.vtable->get_memory_info(a.backend.instance, &m, &e) != PLINTH_OK) {
      throw Error(static_cast<plinth_status>(e.status), e.message);
    }
    info_.block_size = c.at("block_size").get<uint32_t>();
    info_.bytes_per_block = l.bytes_per_token * info_.block_size;
    if (c.contains("num_blocks")) {
      info_.num_blocks = c["num_blocks"].get<uint32_t>();
    } else {
      double budget = static_cast<double>(m.free_bytes) * c.at("memory_fraction").get<double>();
      info_.num_blocks = static_cast<uint32_t>(budget / static_cast<double>(info_.bytes_per_block));
    }
    host_.info("create kv_cache");
  }
  ~TestKv() { host_.info("destroy kv_cache"); }
  plinth_kv_info info() { return info_; }
  plinth_kv_stats stats() {
    plinth_kv_stats s{};
    s.num_blocks = s.num_free_blocks = info_.num_blocks;
    return s;
  }
  uint32_t blocks_needed(plinth_seq_id, uint32_t) { not_modelled("blocks_needed"); }
  uint32_t allocate(plinth_seq_id, uint32_t, std::span<plinth_block_copy>) {
    not_modelled("allocate");
  }
  std::span<const int32_t> block_table(plinth_seq_id) { not_modelled("block_table"); }
  void free_seq(plinth_seq_id) {}
  void truncate(plinth_seq_id, uint32_t) { not_modelled("truncate"); }
  void fork(plinth_seq_id, plinth_seq_id) { not_modelled("fork"); }
  void attach(plinth_seq_id, std::span<const int32_t>, uint32_t) { not_modelled("attach"); }
  void ref_blocks(std::span<const int32_t>) { not_modelled("ref_blocks"); }
  void unref_blocks(std::span<const int32_t>) { not_modelled("unref_blocks"); }

 private:
  plinth::sdk::Host host_;
  plinth_kv_info info_{};
};

// --- scheduler: checks its wiring and budgets ---------------------------------------------------
inline const char* const kSchedulerSchema = R"json({
  "type": "object", "additionalProperties": false,
  "properties": {
    "max_num_seqs": {"type": "integer", "minimum": 1, "maximum": 4096, "default": 64},
    "max_num_batched_tokens": {"type": "integer", "minimum": 1, "default": 2048},
    "policy": {"type": "string", "enum": ["fcfs", "priority"], "default": "fcfs"}
  }})json";

class TestScheduler {
 public:
  explicit TestScheduler(const plinth_create_args& a) : host_(a.host, a.instance_name) {
    if (a.kv_cache.vtable == nullptr || a.kv_cache.instance == nullptr) {
      throw std::invalid_argument("test_scheduler: needs the kv_cache");
    }
    max_num_seqs_ = config_of(a).at("max_num_seqs").get<uint32_t>();
    host_.info("create scheduler");
  }
  ~TestScheduler() { host_.info("destroy scheduler"); }
  void add(const plinth_sched_request&) { not_modelled("add"); }
  void abort_seq(plinth_seq_id) {}
  plinth_sched_output schedule(const plinth_sched_step&) { not_modelled("schedule"); }
  void update(std::span<const plinth_sched_result>) { not_modelled("update"); }
  plinth_sched_stats stats() { return plinth_sched_stats{}; }

 private:
  plinth::sdk::Host host_;
  uint32_t max_num_seqs_ = 0;
};

// --- graph_runner: refuses a backend without the CUDA extension itself, too ---------------------
class TestGraphRunner {
 public:
  explicit TestGraphRunner(const plinth_create_args& a) {
    const plinth_lifecycle& l = a.backend.vtable->lifecycle;
    if (l.get_extension == nullptr ||
        l.get_extension(a.backend.instance, PLINTH_EXT_CUDA_STREAM) == nullptr) {
      throw Error(PLINTH_ERR_UNSUPPORTED, "test_graph_runner: backend lacks plinth.cuda_stream/1");
    }
  }
  void capture() {}
  bool can_run(const plinth_batch&) { return false; }
  plinth_forward_output run(const plinth_batch&) { not_modelled("run"); }
};

// --- prefix_cache: caches nothing, every match misses
// --------------------------------------------- Both adapters' members: match / insert without a
// salt (ABI 1.0) and with one (ABI 1.1).
class TestPrefixCache {
 public:
  explicit TestPrefixCache(const plinth_create_args& a) {
    if (a.kv_cache.vtable == nullptr)
      throw std::invalid_argument("test prefix cache: needs kv_cache");
  }
  plinth_prefix_match match(std::span<const int32_t> tokens) {
    queried_ += tokens.size();
    return plinth_prefix_match{};
  }
  plinth_prefix_match match(std::span<const int32_t> tokens, std::string_view) {
    return match(tokens);
  }
  void release(uint64_t) {}
  void insert(std::span<const int32_t>, std::span<const int32_t>) {}
  void insert(std::span<const int32_t> t, std::string_view, std::span<const int32_t> b) {
    insert(t, b);
  }
  uint32_t evict(uint32_t) { return 0; }
  plinth_prefix_stats stats() {
    plinth_prefix_stats s{};
    s.num_queried_tokens = queried_;
    return s;
  }

 private:
  uint64_t queried_ = 0;
};

// --- speculator: drafts the last token once more; greedy verification --------------------------
class TestSpeculator {
 public:
  explicit TestSpeculator(const plinth_create_args& a) : host_(a.host, a.instance_name) {
    if (a.model == nullptr || a.backend.vtable == nullptr) {
      throw std::invalid_argument("test_speculator: needs the model and the backend");
    }
    host_.info("create speculator");
  }
  ~TestSpeculator() { host_.info("destroy speculator"); }
  plinth_spec_proposal propose(std::span<const plinth_spec_seq> seqs, uint32_t max_draft) {
    const uint32_t k = std::min<uint32_t>(max_draft, 1);
    num_draft_.assign(seqs.size(), 0);
    draft_.assign(seqs.size() * k, 0);
    for (size_t i = 0; i < seqs.size() && k > 0; ++i) {
      if (seqs[i].num_tokens == 0) continue;
      num_draft_[i] = 1;
      draft_[i * k] = seqs[i].tokens[seqs[i].num_tokens - 1];
      ++stats_.num_draft_tokens;
    }
    plinth_spec_proposal p{};
    p.num_seqs = static_cast<uint32_t>(seqs.size());
    p.max_draft = k;
    p.num_draft = num_draft_.data();
    p.draft_tokens = draft_.data();
    return p;
  }
  void verify(std::span<const plinth_spec_verify> items, std::span<uint32_t> accepted,
              std::span<int32_t> next_token) {
    for (size_t i = 0; i < items.size(); ++i) {
      const plinth_spec_verify& v = items[i];
      uint32_t n = 0;
      while (n < v.num_draft && v.draft_tokens[n] == v.target_tokens[n]) ++n;
      accepted[i] = n;
      next_token[i] = v.target_tokens[n];
      stats_.num_accepted_tokens += n;
    }
  }
  void release_seq(plinth_seq_id) {}
  plinth_spec_stats stats() { return stats_; }

 private:
  plinth::sdk::Host host_;
  std::vector<uint32_t> num_draft_;
  std::vector<int32_t> draft_;
  plinth_spec_stats stats_{};
};

}  // namespace plinth_test
