// A scheduler wired to the real kv_paged core (through its ABI table, as the host wires it), and a
// deterministic fake "model" loop: each step calls schedule, then reports results — a sequence
// whose chunk reaches its num_tokens samples one token; draft tokens (lookahead) are accepted by a
// fixed rule; a sequence finishes at its per-request target length.
#pragma once

#include <gtest/gtest.h>

#include <plinth/kv_cache.hpp>

#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "../kv_paged/fake_backend.hpp"
#include "kv_paged_plugin.hpp"
#include "scheduler.hpp"

namespace plinth::test {

using scheduler_continuous::Scheduler;
using scheduler_continuous::SchedulerConfig;

inline const plinth_kv_cache_vtable* kv_paged_table() {
  static const plinth_kv_cache_vtable t = sdk::kv_cache_vtable<kv_paged::KvPagedPlugin>();
  return &t;
}

/// What the fake model knows of one request.
struct Request {
  uint32_t prompt = 0;
  uint32_t target = 0;      // finishes when num_tokens reaches this
  uint32_t num_tokens = 0;  // prompt + sampled
  bool finished = false;
  bool aborted = false;
  uint64_t added_step = 0, first_scheduled_step = UINT64_MAX, finished_step = 0;
};

class Harness {
 public:
  /// A kv_paged pool of `num_blocks` blocks of `block_size` and a scheduler with `config`.
  Harness(uint32_t block_size, uint32_t num_blocks, double watermark, SchedulerConfig config) {
    std::string kv_config = "{\"block_size\": " + std::to_string(block_size) +
                            ", \"num_blocks\": " + std::to_string(num_blocks) +
                            ", \"watermark\": " + std::to_string(watermark) + "}";
    plinth_create_args args = kv_args(host, backend, kv_config.c_str());
    plinth_error err{};
    err.struct_size = sizeof(err);
    if (kv_paged_table()->lifecycle.create(&args, &kv_instance, &err) != PLINTH_OK) {
      throw std::runtime_error(err.message);
    }
    scheduler = std::make_unique<Scheduler>(config, kv_ref(), sdk::Host(&host.api, "sched"));
  }
  ~Harness() {
    scheduler.reset();
    kv_paged_table()->lifecycle.destroy(kv_instance);
  }
  Harness(const Harness&) = delete;
  Harness& operator=(const Harness&) = delete;

  plinth_kv_cache_ref kv_ref() { return {kv_paged_table(), kv_instance}; }
  const kv_paged::BlockTables& kv() const {
    return reinterpret_cast<const kv_paged::KvPagedPlugin*>(kv_instance)->tables();
  }

  void add(plinth_seq_id seq, uint32_t prompt, uint32_t target, int32_t priority = 0) {
    plinth_sched_request r{};
    r.struct_size = sizeof(r);
    r.seq = seq;
    r.num_prompt_tokens = prompt;
    r.max_tokens = target - prompt;
    r.priority = priority;
    r.arrival_time = static_cast<double>(arrivals++);
    scheduler->add(r);
    requests[seq] = Request{prompt, target, prompt, false, false, steps, UINT64_MAX, 0};
  }

  void abort(plinth_seq_id seq) {
    scheduler->abort_seq(seq);
    auto it = requests.find(seq);
    if (it != requests.end() && !it->second.finished) it->second.aborted = true;
  }

  /// One engine step; checks the step's invariants. `accept_drafts` of the lookahead tokens are
  /// accepted per decoding sequence (capped by what was scheduled).
  plinth_sched_output step(uint32_t lookahead = 0, uint32_t accept_drafts = 0) {
    plinth_sched_step st{};
    st.struct_size = sizeof(st);
    st.num_lookahead_tokens = lookahead;
    plinth_sched_output out = scheduler->schedule(st);
    ++steps;
    const SchedulerConfig& c = scheduler->config();
    EXPECT_LE(out.num_batched_tokens, c.max_num_batched_tokens);
    EXPECT_LE(out.num_scheduled, c.max_num_seqs);
    EXPECT_LE(scheduler->running().size(), c.max_num_seqs);
    uint64_t sum = 0;
    std::set<plinth_seq_id> seen;
    for (uint32_t i = 0; i < out.num_preempted; ++i) {
      ++preemptions[out.preempted[i]];
      EXPECT_FALSE(kv().contains(out.preempted[i]));
    }
    std::vector<plinth_sched_result> results;
    for (uint32_t i = 0; i < out.num_scheduled; ++i) {
      const plinth_seq_id s = out.seqs[i];
      EXPECT_TRUE(seen.insert(s).second) << "seq " << s << " scheduled twice";
      EXPECT_GT(out.num_new_tokens[i], 0u);
      sum += out.num_new_tokens[i];
      Request& r = requests.at(s);
      if (r.first_scheduled_step == UINT64_MAX) r.first_scheduled_step = steps;
      const uint32_t end = out.num_computed[i] + out.num_new_tokens[i];
      // The KV holds room for every token computed this step.
      EXPECT_GE(uint64_t{kv().block_table(s).size()} * kv().block_size(), end);
      plinth_sched_result res{s, 0, r.num_tokens, 0};
      if (end <= r.num_tokens) {
        res.num_computed = end;
        if (end == r.num_tokens) ++r.num_tokens;  // logits sampled: one new token
      } else {
        // Decode with draft slots: token num_computed is the last sampled one, the rest drafts.
        EXPECT_EQ(out.num_computed[i] + 1, r.num_tokens);
        uint32_t drafts = end - r.num_tokens;
        uint32_t accepted = std::min(accept_drafts, drafts);
        res.num_computed = r.num_tokens + accepted;
        r.num_tokens += accepted + 1;  // accepted drafts + the bonus token
      }
      if (r.num_tokens >= r.target) {
        r.num_tokens = r.target;
        res.num_computed = std::min(res.num_computed, r.num_tokens);
        res.finished = 1;
        r.finished = true;
        r.finished_step = steps;
      }
      res.num_tokens = r.num_tokens;
      results.push_back(res);
    }
    EXPECT_EQ(sum, out.num_batched_tokens);
    scheduler->update(results);
    kv().check_invariants();
    return out;
  }

  bool all_done() const {
    for (const auto& [s, r] : requests) {
      if (!r.finished && !r.aborted) return false;
    }
    return true;
  }

  FakeHost host;
  FakeBackend backend;
  plinth_instance* kv_instance = nullptr;
  std::unique_ptr<Scheduler> scheduler;
  std::map<plinth_seq_id, Request> requests;
  std::map<plinth_seq_id, uint32_t> preemptions;
  uint64_t steps = 0;
  uint64_t arrivals = 0;
};

inline SchedulerConfig config(uint32_t max_seqs, uint32_t max_tokens, bool chunked = true) {
  SchedulerConfig c;
  c.max_num_seqs = max_seqs;
  c.max_num_batched_tokens = max_tokens;
  c.enable_chunked_prefill = chunked;
  return c;
}

}  // namespace plinth::test
