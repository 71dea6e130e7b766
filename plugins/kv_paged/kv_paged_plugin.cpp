#include "kv_paged_plugin.hpp"

#include <cstring>
#include <stdexcept>
#include <string>

namespace plinth::kv_paged {

namespace {

KvPagedConfig config_of(const plinth_create_args& args) {
  return parse_config(args.config_json != nullptr ? args.config_json : "");
}

PoolSize size_of(const plinth_create_args& args, const KvPagedConfig& config) {
  const plinth_backend_vtable* be = args.backend.vtable;
  if (be == nullptr || args.backend.instance == nullptr || be->get_kv_layout == nullptr ||
      be->get_memory_info == nullptr) {
    throw std::invalid_argument(
        "kv_paged: no backend is wired (args.backend); the host must create the backend first");
  }
  // Not sdk::new_error / sdk::check_call: tests/plugins/abi_compat rebuilds this plugin against
  // the frozen 1.0 headers, whose plinth/plugin.hpp predates them.
  plinth_error err{};
  err.struct_size = sizeof(err);
  plinth_kv_layout layout{};
  layout.struct_size = sizeof(layout);
  if (int32_t st = be->get_kv_layout(args.backend.instance, &layout, &err); st != PLINTH_OK) {
    throw sdk::Error(static_cast<plinth_status>(st),
                     std::string("kv_paged: backend get_kv_layout failed: ") + err.message);
  }
  plinth_memory_info mem{};
  mem.struct_size = sizeof(mem);
  if (int32_t st = be->get_memory_info(args.backend.instance, &mem, &err); st != PLINTH_OK) {
    throw sdk::Error(static_cast<plinth_status>(st),
                     std::string("kv_paged: backend get_memory_info failed: ") + err.message);
  }
  return size_pool(config, layout, mem);
}

}  // namespace

KvPagedPlugin::KvPagedPlugin(const plinth_create_args& args)
    : KvPagedPlugin(args, config_of(args), size_of(args, config_of(args))) {}

KvPagedPlugin::KvPagedPlugin(const plinth_create_args& args, const KvPagedConfig& config,
                             const PoolSize& size)
    : host_(args.host, args.instance_name != nullptr ? args.instance_name : "kv_paged"),
      config_(config),
      size_(size),
      tables_(config.block_size, size.num_blocks) {
#ifdef PLINTH_KV_PAGED_WATERMARK_EXT
  watermark_ext_.struct_size = sizeof(watermark_ext_);
  watermark_ext_.watermark_blocks = size.watermark_blocks;
#endif
  m_total_ = host_.metric("plinth_kv_cache_num_blocks", "KV cache blocks in the pool",
                          PLINTH_METRIC_GAUGE);
  m_free_ = host_.metric("plinth_kv_blocks_free", "KV cache blocks on the free list",
                         PLINTH_METRIC_GAUGE);
  // Used blocks and usage reach /metrics through get_stats (the host's
  // plinth_kv_cache_used_blocks, plinth_kv_cache_usage_perc), so they are not exported twice.
  m_waste_ = host_.metric("plinth_kv_waste_ratio",
                          "allocated KV slots not holding a token / allocated slots (0-1)",
                          PLINTH_METRIC_GAUGE);
  publish_metrics();
  host_.info("kv pool: " + std::to_string(size.num_blocks) + " blocks x " +
             std::to_string(config.block_size) + " tokens, " +
             std::to_string((uint64_t{size.num_blocks} * size.bytes_per_block) >> 20) +
             " MiB, watermark " + std::to_string(size.watermark_blocks) + " blocks");
}

plinth_kv_info KvPagedPlugin::info() const {
  plinth_kv_info i{};
  i.struct_size = sizeof(i);
  i.block_size = config_.block_size;
  i.num_blocks = size_.num_blocks;
  i.bytes_per_block = size_.bytes_per_block;
  return i;
}

void KvPagedPlugin::publish_metrics() const {
  plinth_kv_stats s = tables_.stats();
  host_.set(m_total_, s.num_blocks);
  host_.set(m_free_, s.num_free_blocks);
  host_.set(m_waste_, s.num_allocated_slots == 0
                          ? 0.0
                          : static_cast<double>(s.num_allocated_slots - s.num_used_slots) /
                                static_cast<double>(s.num_allocated_slots));
}

uint32_t KvPagedPlugin::allocate(plinth_seq_id seq, uint32_t num_tokens,
                                 std::span<plinth_block_copy> copies) {
  uint32_t n = tables_.allocate(seq, num_tokens, copies);
  publish_metrics();
  return n;
}

void KvPagedPlugin::free_seq(plinth_seq_id seq) {
  tables_.free_seq(seq);
  publish_metrics();
}

void KvPagedPlugin::truncate(plinth_seq_id seq, uint32_t num_tokens) {
  tables_.truncate(seq, num_tokens);
  publish_metrics();
}

void KvPagedPlugin::fork(plinth_seq_id parent, plinth_seq_id child) {
  tables_.fork(parent, child);
  publish_metrics();
}

void KvPagedPlugin::attach(plinth_seq_id seq, std::span<const int32_t> blocks,
                           uint32_t num_tokens) {
  tables_.attach(seq, blocks, num_tokens);
  publish_metrics();
}

void KvPagedPlugin::ref_blocks(std::span<const int32_t> blocks) {
  tables_.ref_blocks(blocks);
  publish_metrics();
}

void KvPagedPlugin::unref_blocks(std::span<const int32_t> blocks) {
  tables_.unref_blocks(blocks);
  publish_metrics();
}

const void* KvPagedPlugin::extension(const char* name) const {
#ifdef PLINTH_KV_PAGED_WATERMARK_EXT
  if (name != nullptr && std::strcmp(name, PLINTH_EXT_KV_WATERMARK) == 0) return &watermark_ext_;
#else
  (void)name;
#endif
  return nullptr;
}

}  // namespace plinth::kv_paged
