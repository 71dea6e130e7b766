// Fakes and fixtures shared by the prefix_radix tests: a BlockRefs that counts references (the
// tree's unit tests), and a real kv_paged pool behind its ABI table with a prefix_radix instance
// wired to it, as the host wires them.
#pragma once

#include <plinth/kv_cache.hpp>

#include <map>
#include <memory>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

#include "../kv_paged/fake_backend.hpp"
#include "kv_paged_plugin.hpp"
#include "prefix_radix_plugin.hpp"
#include "radix_tree.hpp"

namespace plinth::test {

/// Counts references per block; unref of an unreferenced block throws and changes nothing.
struct CountingRefs final : prefix_radix::BlockRefs {
  std::map<int32_t, int> count;
  std::vector<int32_t> unref_log;  // blocks in the order they were unreferenced
  int ref_calls = 0;
  bool fail_ref = false;

  void ref(std::span<const int32_t> blocks) override {
    if (fail_ref) throw std::runtime_error("ref refused");
    ++ref_calls;
    for (int32_t b : blocks) ++count[b];
  }
  void unref(std::span<const int32_t> blocks) override {
    std::map<int32_t, int> want;
    for (int32_t b : blocks) ++want[b];
    for (auto [b, n] : want) {
      if (count[b] < n) throw std::invalid_argument("unref of a free block " + std::to_string(b));
    }
    for (int32_t b : blocks) {
      --count[b];
      unref_log.push_back(b);
    }
  }
  int held(int32_t b) const {
    auto it = count.find(b);
    return it == count.end() ? 0 : it->second;
  }
  int total() const {
    int t = 0;
    for (auto [b, n] : count) t += n;
    return t;
  }
};

inline const plinth_kv_cache_vtable* kv_paged_table() {
  static const plinth_kv_cache_vtable t = sdk::kv_cache_vtable<kv_paged::KvPagedPlugin>();
  return &t;
}

/// A real kv_paged pool (num_blocks of block_size) reached through its ABI table.
struct KvPool {
  FakeHost host;
  FakeBackend backend;
  std::unique_ptr<kv_paged::KvPagedPlugin> kv;

  KvPool(uint32_t block_size, uint32_t num_blocks) {
    const std::string config = "{\"block_size\": " + std::to_string(block_size) +
                               ", \"num_blocks\": " + std::to_string(num_blocks) + "}";
    plinth_create_args args = kv_args(host, backend, config.c_str());
    kv = std::make_unique<kv_paged::KvPagedPlugin>(args);
  }
  plinth_kv_cache_ref ref() {
    return {kv_paged_table(), reinterpret_cast<plinth_instance*>(kv.get())};
  }
  const kv_paged::BlockTables& tables() const { return kv->tables(); }
};

/// Create args for a prefix_cache wired to `kv`.
inline plinth_create_args prefix_args(FakeHost& host, plinth_kv_cache_ref kv, const char* config) {
  plinth_create_args a{};
  a.struct_size = sizeof(a);
  a.host = &host.api;
  a.instance_name = "prefix_radix";
  a.config_json = config;
  a.kv_cache = kv;
  return a;
}

/// Token ids 0, 1, ... n-1 plus `offset`.
inline std::vector<int32_t> iota_tokens(size_t n, int32_t offset = 0) {
  std::vector<int32_t> t(n);
  for (size_t i = 0; i < n; ++i) t[i] = static_cast<int32_t>(i) + offset;
  return t;
}

}  // namespace plinth::test
