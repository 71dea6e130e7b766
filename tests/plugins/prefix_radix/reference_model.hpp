// An independent model of a block-granular prefix cache with RadixAttention's policy, written
// without a tree: a flat map from (namespace, token prefix of i+1 whole blocks) to the block
// holding block i, with a recency tick and a lock count per entry. The invariant test runs it
// beside the plugin and demands the same answers: the same matched blocks, the same evicted
// blocks (so the same LRU order), the same blocks cached after every insert.
//
// Policy, per entry (= per cached block): match covers the longest present prefix, stamps it
// with a new tick and locks it; insert stamps what it covers and adds the missing suffix; evict
// removes, one block at a time, the unlocked entry without a cached extension ("leaf") with the
// oldest tick. The tree's per-node rules imply exactly this, and ticks of leaves never tie.
#pragma once

#include <algorithm>
#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

namespace plinth::test {

class ReferenceModel {
 public:
  using Key = std::vector<int32_t>;  // tokens of blocks 0..i
  struct Match {
    std::vector<int32_t> blocks;
    std::vector<Key> keys;  // what it locked
  };

  ReferenceModel(uint32_t block_size, uint32_t cap) : bs_(block_size), cap_(cap) {}

  Match match(std::span<const int32_t> tokens, const std::string& ns) {
    Match m;
    auto& entries = ns_[ns];
    for (Key k : covered(tokens, ns)) {
      Entry& e = entries.at(k);
      m.blocks.push_back(e.block);
      m.keys.push_back(std::move(k));
    }
    if (!m.blocks.empty()) {
      ++tick_;
      for (const Key& k : m.keys) {
        entries.at(k).tick = tick_;
        ++entries.at(k).lock;
      }
    }
    return m;
  }

  void release(const std::string& ns, const std::vector<Key>& keys) {
    for (const Key& k : keys) --ns_.at(ns).at(k).lock;
  }

  /// Blocks newly cached, or nullopt when the plugin must refuse the insert.
  std::optional<uint32_t> insert(std::span<const int32_t> tokens, const std::string& ns,
                                 std::span<const int32_t> blocks) {
    const size_t full = tokens.size() / bs_;
    if (full > blocks.size()) return std::nullopt;
    std::vector<Key> cov = covered(tokens, ns);
    std::vector<int32_t> fresh(blocks.begin() + static_cast<ptrdiff_t>(cov.size()),
                               blocks.begin() + static_cast<ptrdiff_t>(full));
    std::set<int32_t> seen;
    for (int32_t b : fresh) {
      if (b < 0 || held_.count(b) != 0 || !seen.insert(b).second) return std::nullopt;
    }
    ++tick_;
    auto& entries = ns_[ns];
    for (const Key& k : cov) entries.at(k).tick = tick_;
    if (fresh.empty()) return 0u;
    size_t take = fresh.size();
    if (cap_ > 0 && held_.size() + take > cap_) {
      for (const Key& k : cov) ++entries.at(k).lock;
      evict(static_cast<uint32_t>(held_.size() + take - cap_));
      for (const Key& k : cov) --entries.at(k).lock;
      take = std::min<size_t>(take, cap_ - held_.size());
    }
    for (size_t i = 0; i < take; ++i) {
      const size_t blk = cov.size() + i;
      Key k(tokens.begin(), tokens.begin() + static_cast<ptrdiff_t>((blk + 1) * bs_));
      entries.emplace(std::move(k), Entry{fresh[i], tick_, 0});
      held_.insert(fresh[i]);
    }
    return static_cast<uint32_t>(take);
  }

  /// The blocks evicted, in order.
  std::vector<int32_t> evict(uint32_t n) {
    std::vector<int32_t> out;
    while (out.size() < n) {
      const std::string* best_ns = nullptr;
      const Key* best = nullptr;
      uint64_t best_tick = 0;
      bool tie = false;
      for (const auto& [ns, entries] : ns_) {
        for (auto it = entries.begin(); it != entries.end(); ++it) {
          if (it->second.lock != 0 || has_extension(entries, it)) continue;
          if (best == nullptr || it->second.tick < best_tick) {
            best_ns = &ns;
            best = &it->first;
            best_tick = it->second.tick;
            tie = false;
          } else if (it->second.tick == best_tick) {
            tie = true;
          }
        }
      }
      if (best == nullptr) break;
      if (tie) throw std::logic_error("reference model: two LRU leaves share a tick");
      auto& entries = ns_.at(*best_ns);
      auto it = entries.find(*best);
      out.push_back(it->second.block);
      held_.erase(it->second.block);
      entries.erase(it);
    }
    return out;
  }

  const std::set<int32_t>& held() const { return held_; }
  uint32_t num_evictable() const {
    uint32_t n = 0;
    for (const auto& [ns, entries] : ns_) {
      for (const auto& [k, e] : entries) n += e.lock == 0 ? 1 : 0;
    }
    return n;
  }

 private:
  struct Entry {
    int32_t block;
    uint64_t tick;
    uint32_t lock;
  };
  using Entries = std::map<Key, Entry>;

  // Keys of the longest cached prefix of tokens (whole blocks).
  std::vector<Key> covered(std::span<const int32_t> tokens, const std::string& ns) const {
    std::vector<Key> out;
    auto n = ns_.find(ns);
    if (n == ns_.end()) return out;
    for (size_t i = 1; i * bs_ <= tokens.size(); ++i) {
      Key k(tokens.begin(), tokens.begin() + static_cast<ptrdiff_t>(i * bs_));
      if (n->second.count(k) == 0) break;
      out.push_back(std::move(k));
    }
    return out;
  }
  // Whether some entry extends its key (extensions sort right after a key).
  static bool has_extension(const Entries& entries, Entries::const_iterator it) {
    auto next = std::next(it);
    return next != entries.end() && next->first.size() > it->first.size() &&
           std::equal(it->first.begin(), it->first.end(), next->first.begin());
  }

  uint32_t bs_;
  uint32_t cap_;
  uint64_t tick_ = 0;
  std::map<std::string, Entries> ns_;
  std::set<int32_t> held_;
};

}  // namespace plinth::test
