// prefix_exact: a small but real prefix cache written against the released ABI 1.0 SDK (built with
// tests/fixtures/abi_1_0/include; it knows nothing of salts, match_key or insert_key).
//
// It caches whole blocks by exact prefix: the entry of block i of a sequence is keyed by the
// sequence's tokens [0, (i + 1) * block_size) and holds that block's id and one kv_cache
// reference. match walks the keys of the queried tokens block by block and stops at the first one
// absent; the blocks it returns stay locked until release. evict drops unlocked leaves (entries no
// longer key extends), least recently used first. Every match and insert is counted in the host's
// metrics (plinth_prefix_exact_match_calls_total, ..._insert_calls_total) so a test can see that
// the scheduler called it.
#include <algorithm>
#include <cstdint>
#include <iterator>
#include <map>
#include <span>
#include <stdexcept>
#include <string>
#include <unordered_map>
#include <vector>

#include <plinth/plugin.hpp>
#include <plinth/prefix_cache.hpp>

static_assert(PLINTH_ABI_MAJOR == 1 && PLINTH_ABI_MINOR == 0, "prefix_exact is an ABI 1.0 plugin");

namespace {

using plinth::sdk::Error;

class ExactPrefixCache {
 public:
  explicit ExactPrefixCache(const plinth_create_args& a)
      : host_(a.host, a.instance_name), kv_(a.kv_cache) {
    if (kv_.vtable == nullptr || kv_.instance == nullptr) {
      throw std::invalid_argument("prefix_exact: needs the kv_cache");
    }
    plinth_kv_info info{};
    plinth_error err{};
    err.struct_size = sizeof(err);
    check(kv_.vtable->get_info(kv_.instance, &info, &err), err);
    block_size_ = info.block_size;
    if (block_size_ == 0) throw Error(PLINTH_ERR_INTERNAL, "prefix_exact: kv_cache block size 0");
    match_calls_ = host_.metric("plinth_prefix_exact_match_calls_total",
                                "prefix_exact: match calls", PLINTH_METRIC_COUNTER);
    insert_calls_ = host_.metric("plinth_prefix_exact_insert_calls_total",
                                 "prefix_exact: insert calls", PLINTH_METRIC_COUNTER);
    host_.info("block_size " + std::to_string(block_size_));
  }

  // The cache's references go back to the kv_cache, which outlives this instance.
  ~ExactPrefixCache() {
    std::vector<int32_t> blocks;
    for (const auto& [key, e] : entries_) blocks.push_back(e.block);
    if (!blocks.empty()) {
      kv_.vtable->unref_blocks(kv_.instance, blocks.data(), static_cast<uint32_t>(blocks.size()),
                               nullptr);
    }
  }

  plinth_prefix_match match(std::span<const int32_t> tokens) {
    host_.add(match_calls_, 1);
    queried_ += tokens.size();
    Locked locked;
    std::vector<int32_t> key;
    for (size_t end = block_size_; end <= tokens.size(); end += block_size_) {
      key.assign(tokens.begin(), tokens.begin() + static_cast<std::ptrdiff_t>(end));
      auto it = entries_.find(key);
      if (it == entries_.end()) break;
      locked.entries.push_back(it);
      locked.blocks.push_back(it->second.block);
    }
    plinth_prefix_match m{};
    if (locked.entries.empty()) return m;
    for (auto it : locked.entries) {
      ++it->second.locks;
      it->second.last_used = ++clock_;
    }
    hits_ += locked.blocks.size() * block_size_;
    const uint64_t handle = next_handle_++;
    Locked& held = matches_[handle] = std::move(locked);
    m.num_blocks = static_cast<uint32_t>(held.blocks.size());
    m.num_tokens = m.num_blocks * block_size_;
    m.blocks = held.blocks.data();
    m.handle = handle;
    return m;
  }

  void release(uint64_t handle) {
    auto it = matches_.find(handle);
    if (it == matches_.end()) return;
    for (auto e : it->second.entries) --e->second.locks;
    matches_.erase(it);
  }

  void insert(std::span<const int32_t> tokens, std::span<const int32_t> blocks) {
    host_.add(insert_calls_, 1);
    const size_t full = std::min(tokens.size() / block_size_, blocks.size());
    std::vector<int32_t> key;
    for (size_t i = 0; i < full; ++i) {
      key.assign(tokens.begin(),
                 tokens.begin() + static_cast<std::ptrdiff_t>((i + 1) * block_size_));
      auto [it, added] = entries_.try_emplace(key);
      if (!added) {
        it->second.last_used = ++clock_;
        continue;  // cached already (maybe in another block): the sequence's copy is its own
      }
      plinth_error err{};
      err.struct_size = sizeof(err);
      int32_t st = kv_.vtable->ref_blocks(kv_.instance, &blocks[i], 1, &err);
      if (st != PLINTH_OK) {
        entries_.erase(it);
        check(st, err);
      }
      it->second.block = blocks[i];
      it->second.last_used = ++clock_;
    }
  }

  uint32_t evict(uint32_t num_blocks) {
    uint32_t evicted = 0;
    while (evicted < num_blocks) {
      auto victim = entries_.end();
      for (auto it = entries_.begin(); it != entries_.end(); ++it) {
        if (it->second.locks > 0 || !is_leaf(it)) continue;
        if (victim == entries_.end() || it->second.last_used < victim->second.last_used)
          victim = it;
      }
      if (victim == entries_.end()) break;
      plinth_error err{};
      err.struct_size = sizeof(err);
      check(kv_.vtable->unref_blocks(kv_.instance, &victim->second.block, 1, &err), err);
      entries_.erase(victim);
      ++evicted;
    }
    return evicted;
  }

  plinth_prefix_stats stats() {
    plinth_prefix_stats s{};
    s.num_queried_tokens = queried_;
    s.num_hit_tokens = hits_;
    s.num_cached_blocks = static_cast<uint32_t>(entries_.size());
    for (const auto& [key, e] : entries_) s.num_evictable_blocks += e.locks == 0 ? 1u : 0u;
    return s;
  }

 private:
  struct Entry {
    int32_t block = -1;
    uint32_t locks = 0;
    uint64_t last_used = 0;
  };
  using Entries = std::map<std::vector<int32_t>, Entry>;
  struct Locked {
    std::vector<Entries::iterator> entries;
    std::vector<int32_t> blocks;  // what plinth_prefix_match.blocks points into
  };

  static void check(int32_t status, const plinth_error& err) {
    if (status != PLINTH_OK) {
      throw Error(
          static_cast<plinth_status>(status),
          std::string("prefix_exact: kv_cache: ") + (err.message[0] ? err.message : "failed"));
    }
  }

  // The keys extending `it` follow it directly in the map's lexicographic order.
  bool is_leaf(Entries::const_iterator it) const {
    auto next = std::next(it);
    if (next == entries_.end()) return true;
    const std::vector<int32_t>& k = it->first;
    const std::vector<int32_t>& n = next->first;
    return n.size() <= k.size() || !std::equal(k.begin(), k.end(), n.begin());
  }

  plinth::sdk::Host host_;
  plinth_kv_cache_ref kv_;
  uint32_t block_size_ = 0;
  int64_t match_calls_ = -1;
  int64_t insert_calls_ = -1;
  Entries entries_;
  std::unordered_map<uint64_t, Locked> matches_;
  uint64_t next_handle_ = 1;
  uint64_t clock_ = 0;
  uint64_t queried_ = 0;
  uint64_t hits_ = 0;
};

const plinth_prefix_cache_vtable kTable = plinth::sdk::prefix_cache_vtable<ExactPrefixCache>();

}  // namespace

PLINTH_PLUGIN("prefix_exact", "0.1.0", PLINTH_KIND_PREFIX_CACHE,
              "exact whole-block prefix cache (ABI 1.0 compatibility test)", nullptr, &kTable)
