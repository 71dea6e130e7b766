// plinth SDK — kv_cache adapter: builds a plinth_kv_cache_vtable from a C++ class.
//   struct MyCache {
//     explicit MyCache(const plinth_create_args&);
//     plinth_kv_info info();  plinth_kv_stats stats();
//     uint32_t blocks_needed(plinth_seq_id, uint32_t num_tokens);
//     // returns the number of copies written (<= copies.size())
//     uint32_t allocate(plinth_seq_id, uint32_t num_tokens, std::span<plinth_block_copy> copies);
//     std::span<const int32_t> block_table(plinth_seq_id);   // throws Error(NOT_FOUND) if unknown
//     void free_seq(plinth_seq_id);  void truncate(plinth_seq_id, uint32_t num_tokens);
//     void fork(plinth_seq_id parent, plinth_seq_id child);
//     void attach(plinth_seq_id, std::span<const int32_t> blocks, uint32_t num_tokens);
//     void ref_blocks(std::span<const int32_t>);  void unref_blocks(std::span<const int32_t>);
//   };
#pragma once

#include <span>

#include "plinth/plugin.hpp"

namespace plinth::sdk {

template <class T>
constexpr plinth_kv_cache_vtable kv_cache_vtable() {
  plinth_kv_cache_vtable v{};
  v.struct_size = sizeof(plinth_kv_cache_vtable);
  v.lifecycle = lifecycle<T>();
  v.get_info = [](plinth_instance* i, plinth_kv_info* out, plinth_error* e) -> int32_t {
    return guard(e, [&] { write_out(out, self<T>(i).info()); });
  };
  v.get_stats = [](plinth_instance* i, plinth_kv_stats* out, plinth_error* e) -> int32_t {
    return guard(e, [&] { write_out(out, self<T>(i).stats()); });
  };
  v.blocks_needed = [](plinth_instance* i, plinth_seq_id s, uint32_t n) -> uint32_t {
    try {
      return self<T>(i).blocks_needed(s, n);
    } catch (...) {
      return UINT32_MAX;
    }
  };
  v.allocate = [](plinth_instance* i, plinth_seq_id s, uint32_t n, plinth_block_copy* c,
                  uint32_t cap, uint32_t* nc, plinth_error* e) -> int32_t {
    return guard(e, [&] {
      uint32_t written = self<T>(i).allocate(s, n, std::span<plinth_block_copy>(c, c ? cap : 0));
      if (nc != nullptr) *nc = written;
    });
  };
  v.get_block_table = [](plinth_instance* i, plinth_seq_id s, const int32_t** b, uint32_t* n,
                         plinth_error* e) -> int32_t {
    return guard(e, [&] {
      std::span<const int32_t> t = self<T>(i).block_table(s);
      *b = t.data();
      *n = static_cast<uint32_t>(t.size());
    });
  };
  v.free_seq = [](plinth_instance* i, plinth_seq_id s) {
    try {
      self<T>(i).free_seq(s);
    } catch (...) {
    }
  };
  v.truncate = [](plinth_instance* i, plinth_seq_id s, uint32_t n, plinth_error* e) -> int32_t {
    return guard(e, [&] { self<T>(i).truncate(s, n); });
  };
  v.fork = [](plinth_instance* i, plinth_seq_id p, plinth_seq_id c, plinth_error* e) -> int32_t {
    return guard(e, [&] { self<T>(i).fork(p, c); });
  };
  v.attach = [](plinth_instance* i, plinth_seq_id s, const int32_t* b, uint32_t nb, uint32_t nt,
                plinth_error* e) -> int32_t {
    return guard(e, [&] { self<T>(i).attach(s, std::span<const int32_t>(b, nb), nt); });
  };
  v.ref_blocks = [](plinth_instance* i, const int32_t* b, uint32_t n, plinth_error* e) -> int32_t {
    return guard(e, [&] { self<T>(i).ref_blocks(std::span<const int32_t>(b, n)); });
  };
  v.unref_blocks = [](plinth_instance* i, const int32_t* b, uint32_t n,
                      plinth_error* e) -> int32_t {
    return guard(e, [&] { self<T>(i).unref_blocks(std::span<const int32_t>(b, n)); });
  };
  return v;
}

}  // namespace plinth::sdk
