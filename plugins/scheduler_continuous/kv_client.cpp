#include "kv_client.hpp"

#include <plinth/ext_kv_watermark.h>
#include <plinth/plugin.hpp>

#include <cmath>
#include <stdexcept>
#include <string>

namespace plinth::scheduler_continuous {

KvClient::KvClient(plinth_kv_cache_ref ref) : ref_(ref) {
  if (ref.vtable == nullptr || ref.instance == nullptr) {
    throw std::invalid_argument(
        "scheduler_continuous: no kv_cache is wired (args.kv_cache); the manifest needs a "
        "kv_cache plugin");
  }
}

plinth_kv_info KvClient::info() const {
  plinth_kv_info out{};
  out.struct_size = sizeof(out);
  plinth_error err = sdk::new_error();
  sdk::check_call(ref_.vtable->get_info(ref_.instance, &out, &err), err,
                  "scheduler_continuous: kv_cache get_info");
  return out;
}

plinth_kv_stats KvClient::stats() const {
  plinth_kv_stats out{};
  out.struct_size = sizeof(out);
  plinth_error err = sdk::new_error();
  sdk::check_call(ref_.vtable->get_stats(ref_.instance, &out, &err), err,
                  "scheduler_continuous: kv_cache get_stats");
  return out;
}

uint32_t KvClient::blocks_needed(plinth_seq_id seq, uint32_t num_tokens) const {
  return ref_.vtable->blocks_needed(ref_.instance, seq, num_tokens);
}

bool KvClient::allocate(plinth_seq_id seq, uint32_t num_tokens,
                        std::vector<plinth_block_copy>& copies) {
  plinth_block_copy copy[1] = {{-1, -1}};
  uint32_t num_copies = 0;
  plinth_error err = sdk::new_error();
  int32_t st = ref_.vtable->allocate(ref_.instance, seq, num_tokens, copy, 1, &num_copies, &err);
  if (st == PLINTH_ERR_NO_CAPACITY) return false;
  sdk::check_call(st, err, "scheduler_continuous: kv_cache allocate");
  for (uint32_t i = 0; i < num_copies && i < 1; ++i) copies.push_back(copy[i]);
  return true;
}

void KvClient::free_seq(plinth_seq_id seq) {
  ref_.vtable->free_seq(ref_.instance, seq);
}

void KvClient::truncate(plinth_seq_id seq, uint32_t num_tokens) {
  plinth_error err = sdk::new_error();
  sdk::check_call(ref_.vtable->truncate(ref_.instance, seq, num_tokens, &err), err,
                  "scheduler_continuous: kv_cache truncate");
}

void KvClient::fork(plinth_seq_id parent, plinth_seq_id child) {
  plinth_error err = sdk::new_error();
  sdk::check_call(ref_.vtable->fork(ref_.instance, parent, child, &err), err,
                  "scheduler_continuous: kv_cache fork");
}

void KvClient::attach(plinth_seq_id seq, std::span<const int32_t> blocks, uint32_t num_tokens) {
  plinth_error err = sdk::new_error();
  sdk::check_call(ref_.vtable->attach(ref_.instance, seq, blocks.data(),
                                      static_cast<uint32_t>(blocks.size()), num_tokens, &err),
                  err, "scheduler_continuous: kv_cache attach");
}

std::vector<int32_t> KvClient::block_table(plinth_seq_id seq) const {
  const int32_t* blocks = nullptr;
  uint32_t n = 0;
  plinth_error err = sdk::new_error();
  sdk::check_call(ref_.vtable->get_block_table(ref_.instance, seq, &blocks, &n, &err), err,
                  "scheduler_continuous: kv_cache get_block_table");
  return {blocks, blocks + n};
}

uint32_t KvClient::watermark_blocks(double default_fraction) const {
  if (ref_.vtable->lifecycle.get_extension != nullptr) {
    const auto* ext = static_cast<const plinth_kv_watermark_ext*>(
        ref_.vtable->lifecycle.get_extension(ref_.instance, PLINTH_EXT_KV_WATERMARK));
    if (PLINTH_HAS_FIELD(ext, plinth_kv_watermark_ext, watermark_blocks)) {
      return ext->watermark_blocks;
    }
  }
  return static_cast<uint32_t>(std::floor(default_fraction * info().num_blocks));
}

}  // namespace plinth::scheduler_continuous
