// plinth SDK — prefix_cache adapter: builds a plinth_prefix_cache_vtable from a C++ class.
//   struct MyPrefixCache {
//     explicit MyPrefixCache(const plinth_create_args&);
//     // salt: the key's namespace (empty for the 1.0 calls match / insert)
//     plinth_prefix_match match(std::span<const int32_t> tokens, std::string_view salt);
//     void release(uint64_t handle);
//     void insert(std::span<const int32_t> tokens, std::string_view salt,
//                 std::span<const int32_t> blocks);
//     uint32_t evict(uint32_t num_blocks);          // returns blocks evicted
//     plinth_prefix_stats stats();
//   };
#pragma once

#include <span>
#include <string_view>

#include "plinth/plugin.hpp"

namespace plinth::sdk {

/// The salt bytes of a key (empty when salt_len is 0).
inline std::string_view salt_of(const plinth_prefix_key& k) {
  return k.salt_len == 0 || k.salt == nullptr ? std::string_view()
                                              : std::string_view(k.salt, k.salt_len);
}

template <class T>
constexpr plinth_prefix_cache_vtable prefix_cache_vtable() {
  plinth_prefix_cache_vtable v{};
  v.struct_size = sizeof(plinth_prefix_cache_vtable);
  v.lifecycle = lifecycle<T>();
  v.match = [](plinth_instance* i, const int32_t* t, uint32_t n, plinth_prefix_match* out,
               plinth_error* e) -> int32_t {
    return guard(e, [&] {
      write_out(out, self<T>(i).match(std::span<const int32_t>(t, n), std::string_view()));
    });
  };
  v.release = [](plinth_instance* i, uint64_t h) {
    try {
      self<T>(i).release(h);
    } catch (...) {
    }
  };
  v.insert = [](plinth_instance* i, const int32_t* t, uint32_t nt, const int32_t* b, uint32_t nb,
                plinth_error* e) -> int32_t {
    return guard(e, [&] {
      self<T>(i).insert(std::span<const int32_t>(t, nt), std::string_view(),
                        std::span<const int32_t>(b, nb));
    });
  };
  v.evict = [](plinth_instance* i, uint32_t n, uint32_t* evicted, plinth_error* e) -> int32_t {
    return guard(e, [&] {
      uint32_t k = self<T>(i).evict(n);
      if (evicted != nullptr) *evicted = k;
    });
  };
  v.get_stats = [](plinth_instance* i, plinth_prefix_stats* out, plinth_error* e) -> int32_t {
    return guard(e, [&] { write_out(out, self<T>(i).stats()); });
  };
  v.match_key = [](plinth_instance* i, const plinth_prefix_key* k, plinth_prefix_match* out,
                   plinth_error* e) -> int32_t {
    return guard(e, [&] {
      write_out(out,
                self<T>(i).match(std::span<const int32_t>(k->tokens, k->num_tokens), salt_of(*k)));
    });
  };
  v.insert_key = [](plinth_instance* i, const plinth_prefix_key* k, const int32_t* b, uint32_t nb,
                    plinth_error* e) -> int32_t {
    return guard(e, [&] {
      self<T>(i).insert(std::span<const int32_t>(k->tokens, k->num_tokens), salt_of(*k),
                        std::span<const int32_t>(b, nb));
    });
  };
  return v;
}

}  // namespace plinth::sdk
