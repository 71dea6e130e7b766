#include "prefix_client.hpp"

#include <plinth/plugin.hpp>

#include <algorithm>
#include <string>

namespace plinth::scheduler_continuous {

PrefixClient::PrefixClient(plinth_prefix_cache_ref ref, const plinth_host_api* host)
    : ref_(ref), host_(host) {
  const bool can_describe =
      PLINTH_HAS_FIELD(host, plinth_host_api, get_seq) && host->get_seq != nullptr;
  if (ref_.vtable == nullptr || ref_.instance == nullptr || !can_describe) {
    ref_ = {};
    return;
  }
  has_keys_ = PLINTH_HAS_FIELD(ref_.vtable, plinth_prefix_cache_vtable, insert_key) &&
              ref_.vtable->match_key != nullptr && ref_.vtable->insert_key != nullptr;
}

PrefixClient::Key PrefixClient::key_of(plinth_seq_id seq, uint32_t max_tokens) const {
  Key k;
  plinth_seq_view v{};
  v.struct_size = sizeof(v);
  if (host_->get_seq(host_->ctx, seq, &v) != PLINTH_OK) return k;
  if ((v.flags & PLINTH_SEQ_NO_PREFIX_CACHE) != 0) return k;
  if (v.cache_salt_len > 0 && !has_keys_) return k;  // a 1.0 cache cannot keep salts apart
  k.usable = true;
  k.key.struct_size = sizeof(k.key);
  k.key.tokens = v.tokens;
  k.key.num_tokens = std::min(max_tokens, v.num_tokens);
  k.key.salt = v.cache_salt;
  k.key.salt_len = v.cache_salt_len;
  return k;
}

PrefixMatch PrefixClient::match(plinth_seq_id seq, uint32_t max_tokens) {
  PrefixMatch m;
  if (!enabled() || max_tokens == 0) return m;
  Key k = key_of(seq, max_tokens);
  if (!k.usable) return m;
  plinth_prefix_match out{};
  out.struct_size = sizeof(out);
  plinth_error err = sdk::new_error();
  int32_t st = has_keys_
                   ? ref_.vtable->match_key(ref_.instance, &k.key, &out, &err)
                   : ref_.vtable->match(ref_.instance, k.key.tokens, k.key.num_tokens, &out, &err);
  sdk::check_call(st, err, "scheduler_continuous: prefix_cache match");
  if (out.num_tokens > k.key.num_tokens || (out.num_blocks > 0 && out.blocks == nullptr)) {
    release(out.handle);
    throw sdk::Error(PLINTH_ERR_INTERNAL, "scheduler_continuous: prefix_cache match returned " +
                                              std::to_string(out.num_tokens) + " tokens for a " +
                                              std::to_string(k.key.num_tokens) +
                                              "-token query: fix the plugin");
  }
  m.num_tokens = out.num_tokens;
  m.blocks.assign(out.blocks, out.blocks + out.num_blocks);
  m.handle = out.handle;
  return m;
}

void PrefixClient::release(uint64_t handle) {
  if (enabled() && handle != 0) ref_.vtable->release(ref_.instance, handle);
}

void PrefixClient::insert(plinth_seq_id seq, uint32_t num_tokens, std::span<const int32_t> blocks) {
  if (!enabled() || num_tokens == 0) return;
  Key k = key_of(seq, num_tokens);
  if (!k.usable || k.key.num_tokens < num_tokens) return;
  plinth_error err = sdk::new_error();
  const auto nb = static_cast<uint32_t>(blocks.size());
  int32_t st = has_keys_ ? ref_.vtable->insert_key(ref_.instance, &k.key, blocks.data(), nb, &err)
                         : ref_.vtable->insert(ref_.instance, k.key.tokens, k.key.num_tokens,
                                               blocks.data(), nb, &err);
  sdk::check_call(st, err, "scheduler_continuous: prefix_cache insert");
}

uint32_t PrefixClient::evict(uint32_t num_blocks) {
  if (!enabled() || num_blocks == 0) return 0;
  uint32_t evicted = 0;
  plinth_error err = sdk::new_error();
  sdk::check_call(ref_.vtable->evict(ref_.instance, num_blocks, &evicted, &err), err,
                  "scheduler_continuous: prefix_cache evict");
  return std::min(evicted, num_blocks);
}

uint32_t PrefixClient::evictable_blocks() const {
  if (!enabled()) return 0;
  plinth_prefix_stats s{};
  s.struct_size = sizeof(s);
  plinth_error err = sdk::new_error();
  sdk::check_call(ref_.vtable->get_stats(ref_.instance, &s, &err), err,
                  "scheduler_continuous: prefix_cache get_stats");
  return s.num_evictable_blocks;
}

}  // namespace plinth::scheduler_continuous
