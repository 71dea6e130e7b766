// What the misbehaving plugins that wrap a real one share (bad_sched_unknown, bad_sched_finished,
// bad_kv_outside_pool): they behave exactly like the wrapped plugin (scheduler_continuous,
// kv_paged) until the one call where they break its contract, so the engine runs real traffic
// around the violation. Their config holds the wrapped plugin's config under `inner`.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "plinth/plugin.h"
#include "plinth/scheduler.h"

namespace plinth_test {

/// The plugin's own config (the host filled its schema's defaults).
inline nlohmann::json own_config(const plinth_create_args& a) {
  return nlohmann::json::parse(a.config_json != nullptr ? a.config_json : "{}");
}

/// The wrapped plugin's config as JSON text: `inner` of the own config, {} when absent.
inline std::string inner_config(const plinth_create_args& a) {
  return own_config(a).value("inner", nlohmann::json::object()).dump();
}

/// `a` with config_json replaced by `config` (which must outlive the wrapped plugin's create).
inline plinth_create_args with_config(const plinth_create_args& a, const std::string& config) {
  plinth_create_args inner = a;
  inner.config_json = config.c_str();
  return inner;
}

/// A copy of a scheduler decision with one more sequence `extra` (1 new token from position
/// `extra_computed`) at its end; the arrays are owned by this object until the next call.
class ExtendedOutput {
 public:
  plinth_sched_output extend(const plinth_sched_output& in, plinth_seq_id extra,
                             uint32_t extra_computed) {
    seqs_.assign(in.seqs, in.seqs + in.num_scheduled);
    computed_.assign(in.num_computed, in.num_computed + in.num_scheduled);
    new_.assign(in.num_new_tokens, in.num_new_tokens + in.num_scheduled);
    seqs_.push_back(extra);
    computed_.push_back(extra_computed);
    new_.push_back(1);
    plinth_sched_output out = in;
    out.num_scheduled = static_cast<uint32_t>(seqs_.size());
    out.seqs = seqs_.data();
    out.num_computed = computed_.data();
    out.num_new_tokens = new_.data();
    out.num_batched_tokens = in.num_batched_tokens + 1;
    return out;
  }

 private:
  std::vector<plinth_seq_id> seqs_;
  std::vector<uint32_t> computed_, new_;
};

}  // namespace plinth_test
