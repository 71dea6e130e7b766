#include "prefix_radix_plugin.hpp"

#include <plinth/kv_cache.h>

#include <stdexcept>
#include <string>
#include <utility>

namespace plinth::prefix_radix {

namespace {

uint32_t block_size_of(const KvBlockRefs& refs) {
  const plinth_kv_info info = refs.info();
  if (info.block_size == 0) {
    throw std::invalid_argument("prefix_radix: the wired kv_cache reports block_size 0");
  }
  return info.block_size;
}

}  // namespace

KvBlockRefs::KvBlockRefs(plinth_kv_cache_ref kv) : kv_(kv) {
  const plinth_kv_cache_vtable* v = kv.vtable;
  if (v == nullptr || kv.instance == nullptr) {
    throw std::invalid_argument(
        "prefix_radix: no kv_cache is wired (args.kv_cache is NULL); a prefix_cache keeps KV "
        "blocks alive through the kv_cache: list a kv_cache plugin (e.g. kv_paged) in the "
        "manifest, which the host creates first and passes to the prefix_cache");
  }
  if (v->get_info == nullptr || v->ref_blocks == nullptr || v->unref_blocks == nullptr) {
    throw std::invalid_argument(
        "prefix_radix: the wired kv_cache lacks get_info, ref_blocks or unref_blocks (all "
        "required by kv_cache.h); use a kv_cache plugin that implements them");
  }
}

plinth_kv_info KvBlockRefs::info() const {
  plinth_kv_info info{};
  info.struct_size = sizeof(info);
  plinth_error err = sdk::new_error();
  sdk::check_call(kv_.vtable->get_info(kv_.instance, &info, &err), err,
                  "prefix_radix: kv_cache get_info");
  return info;
}

void KvBlockRefs::ref(std::span<const int32_t> blocks) {
  if (blocks.empty()) return;
  plinth_error err = sdk::new_error();
  sdk::check_call(kv_.vtable->ref_blocks(kv_.instance, blocks.data(),
                                         static_cast<uint32_t>(blocks.size()), &err),
                  err, "prefix_radix: kv_cache ref_blocks");
}

void KvBlockRefs::unref(std::span<const int32_t> blocks) {
  if (blocks.empty()) return;
  plinth_error err = sdk::new_error();
  sdk::check_call(kv_.vtable->unref_blocks(kv_.instance, blocks.data(),
                                           static_cast<uint32_t>(blocks.size()), &err),
                  err, "prefix_radix: kv_cache unref_blocks");
}

PrefixRadixPlugin::PrefixRadixPlugin(const plinth_create_args& args)
    : PrefixRadixPlugin(args, parse_config(args.config_json != nullptr ? args.config_json : "")) {}

PrefixRadixPlugin::PrefixRadixPlugin(const plinth_create_args& args, PrefixRadixConfig config)
    : host_(args.host, args.instance_name != nullptr ? args.instance_name : "prefix_radix"),
      config_(std::move(config)),
      model_(args.model != nullptr && args.model->path != nullptr ? args.model->path : ""),
      refs_(args.kv_cache),
      tree_(block_size_of(refs_), refs_, config_.max_cached_blocks) {
  // Per match call (a scheduler may also match to order its queue or to move a lock); the
  // admission-level hit rate is the scheduler's plinth_prefix_cache_queries/hits_total.
  m_queries_ = host_.metric("plinth_prefix_radix_match_tokens_total",
                            "tokens looked up by prefix_radix match calls", PLINTH_METRIC_COUNTER);
  m_hits_ = host_.metric("plinth_prefix_radix_match_hit_tokens_total",
                         "of those, tokens found cached", PLINTH_METRIC_COUNTER);
  m_evicted_ = host_.metric("plinth_prefix_cache_evicted_blocks_total",
                            "KV blocks evicted from the prefix cache", PLINTH_METRIC_COUNTER);
  m_cached_ = host_.metric("plinth_prefix_cache_cached_blocks", "KV blocks the prefix cache holds",
                           PLINTH_METRIC_GAUGE);
  publish_metrics();
  host_.info("prefix cache: radix tree over blocks of " + std::to_string(tree_.block_size()) +
             " tokens, " +
             (config_.max_cached_blocks > 0
                  ? "at most " + std::to_string(config_.max_cached_blocks) + " blocks"
                  : std::string("no cap besides the KV pool")));
}

void PrefixRadixPlugin::publish_metrics() {
  const TreeStats s = tree_.stats();
  host_.add(m_queries_, static_cast<double>(s.num_queried_tokens - published_.num_queried_tokens));
  host_.add(m_hits_, static_cast<double>(s.num_hit_tokens - published_.num_hit_tokens));
  host_.add(m_evicted_, static_cast<double>(s.num_evicted_blocks - published_.num_evicted_blocks));
  host_.set(m_cached_, s.num_cached_blocks);
  published_ = s;
}

plinth_prefix_match PrefixRadixPlugin::match(std::span<const int32_t> tokens,
                                             std::string_view salt) {
  const TreeMatch m = tree_.match(tokens, namespace_of(config_.salt, model_, salt));
  publish_metrics();
  plinth_prefix_match out{};
  out.struct_size = sizeof(out);
  out.num_tokens = m.num_tokens;
  out.num_blocks = static_cast<uint32_t>(m.blocks.size());
  out.blocks = m.blocks.empty() ? nullptr : m.blocks.data();
  out.handle = m.handle;
  return out;
}

void PrefixRadixPlugin::release(uint64_t handle) {
  tree_.release(handle);
}

void PrefixRadixPlugin::insert(std::span<const int32_t> tokens, std::string_view salt,
                               std::span<const int32_t> blocks) {
  tree_.insert(tokens, namespace_of(config_.salt, model_, salt), blocks);
  publish_metrics();
}

uint32_t PrefixRadixPlugin::evict(uint32_t num_blocks) {
  const uint32_t n = tree_.evict(num_blocks);
  publish_metrics();
  return n;
}

plinth_prefix_stats PrefixRadixPlugin::stats() const {
  const TreeStats s = tree_.stats();
  plinth_prefix_stats out{};
  out.struct_size = sizeof(out);
  out.num_queried_tokens = s.num_queried_tokens;
  out.num_hit_tokens = s.num_hit_tokens;
  out.num_cached_blocks = s.num_cached_blocks;
  out.num_evictable_blocks = s.num_evictable_blocks;
  out.num_evicted_blocks = s.num_evicted_blocks;
  out.num_inserted_blocks = s.num_inserted_blocks;
  return out;
}

}  // namespace plinth::prefix_radix
