// prefix_radix over the REAL kv_paged pool under >= 20k random operations, run beside an
// independent flat model of the same policy (reference_model.hpp). Simulated requests: a prompt
// drawn from a few shared documents plus a random tail, in one of three salts; match, attach the
// hit to a new sequence, allocate the rest (evicting from the cache when the pool is short);
// finishing inserts the sequence's full blocks and frees it. Also: early releases, standalone
// matches, explicit evictions, aborted sequences, and inserts the plugin must refuse.
//
// After every operation: the tree's own invariants and the pool's; the plugin's cached blocks
// equal the model's; every block's reference count == the sequences holding it (from the test's
// own copies of their tables) + 1 if the model says the cache holds it; the cache's external
// refs are exactly its blocks; stats match the test's tallies. At the end, with every handle
// released, everything evicted and every sequence freed, the pool is entirely free.
#include <gtest/gtest.h>

#include <array>
#include <map>
#include <memory>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "fixtures.hpp"
#include "prefix_radix_plugin.hpp"
#include "reference_model.hpp"

using plinth::prefix_radix::PrefixRadixPlugin;
using plinth::test::ReferenceModel;

namespace {

struct Params {
  uint32_t block_size;
  uint32_t num_blocks;
  uint32_t cap;  // max_cached_blocks
  uint32_t seed;
  int steps;
};

class Simulation {
 public:
  explicit Simulation(const Params& p)
      : p_(p), pool_(p.block_size, p.num_blocks), model_(p.block_size, p.cap), rng_(p.seed) {
    const std::string config =
        R"({"salt": "cfg", "max_cached_blocks": )" + std::to_string(p.cap) + "}";
    plinth_create_args args = plinth::test::prefix_args(host_, pool_.ref(), config.c_str());
    cache_ = std::make_unique<PrefixRadixPlugin>(args);
    for (auto& d : docs_) d = random_doc();
  }

  void run() {
    int counts[10] = {};
    for (int step = 0; step < p_.steps; ++step) {
      const uint32_t op = pick(10);
      ++counts[op];
      switch (op) {
        case 0:
        case 1:
        case 2:
          admit();
          break;
        case 3:
        case 4:
          finish(true);
          break;
        case 5:
          finish(false);
          break;
        case 6:
          evict(pick(7));
          break;
        case 7:
          query();
          break;
        case 8:
          release_one();
          break;
        case 9:
          bad_insert();
          break;
      }
      if (testing::Test::HasFatalFailure()) {
        FAIL() << "at step " << step << " (op " << op << ", seed " << p_.seed << ")";
      }
      check();
      if (testing::Test::HasFatalFailure()) {
        FAIL() << "invariant broken at step " << step << " (op " << op << ", seed " << p_.seed
               << ")";
      }
    }
    for (int c : counts) EXPECT_GT(c, p_.steps / 20);
    const auto s = cache_->stats();
    EXPECT_GT(s.num_hit_tokens, 0u);
    EXPECT_GT(s.num_evicted_blocks, 0u);
    EXPECT_GT(no_capacity_, 0) << "the pool never ran short: raise the load";
    EXPECT_GT(max_nodes_, 2u) << "the tree never branched: raise the sharing";

    // Drain: release every lock, evict everything, free every sequence.
    for (auto& [id, s2] : seqs_) release(s2.handle, s2.salt, s2.keys);
    for (auto& f : floating_) release(f.handle, f.salt, f.keys);
    floating_.clear();
    for (auto& [id, s2] : seqs_) s2.handle = 0;
    check();
    const uint32_t n = cache_->evict(UINT32_MAX);
    EXPECT_EQ(n, model_.evict(UINT32_MAX).size());
    for (const auto& [id, s2] : seqs_) pool_.kv->free_seq(id);
    seqs_.clear();
    check();
    EXPECT_EQ(cache_->tree().num_nodes(), 0u);
    EXPECT_EQ(cache_->stats().num_cached_blocks, 0u);
    EXPECT_EQ(pool_.tables().num_free_blocks(), p_.num_blocks);
    EXPECT_EQ(pool_.tables().num_seqs(), 0u);
  }

 private:
  using Key = ReferenceModel::Key;
  struct Seq {
    std::vector<int32_t> tokens;  // prompt + generated
    std::string salt;
    std::vector<int32_t> blocks;  // the test's copy of its block table
    uint64_t handle = 0;          // a match it still holds
    std::vector<Key> keys;
  };
  struct Floating {
    uint64_t handle;
    std::string salt;
    std::vector<Key> keys;
  };

  uint32_t pick(size_t n) {
    return std::uniform_int_distribution<uint32_t>(0, static_cast<uint32_t>(n - 1))(rng_);
  }
  std::vector<int32_t> random_doc() {
    std::vector<int32_t> d(pick(10 * p_.block_size + 1));
    for (auto& t : d) t = static_cast<int32_t>(pick(100));
    return d;
  }
  std::vector<int32_t> prompt() {
    if (pick(50) == 0) docs_[pick(docs_.size())] = random_doc();
    const auto& d = docs_[pick(docs_.size())];
    std::vector<int32_t> t(d.begin(), d.begin() + pick(d.size() + 1));
    for (uint32_t i = pick(2 * p_.block_size + 1); i > 0; --i) t.push_back(pick(3));
    return t;
  }
  std::string salt() { return salts_[pick(salts_.size())]; }

  // match on the plugin and the model; demands the same answer.
  Floating match(std::span<const int32_t> tokens, const std::string& salt,
                 plinth_prefix_match* out) {
    *out = cache_->match(tokens, salt);
    auto want = model_.match(tokens, salt);
    queried_ += tokens.size();
    hit_ += out->num_tokens;
    EXPECT_EQ(std::vector<int32_t>(out->blocks, out->blocks + out->num_blocks), want.blocks);
    EXPECT_EQ(out->num_tokens, want.blocks.size() * p_.block_size);
    EXPECT_EQ(out->handle != 0, !want.blocks.empty());
    return {out->handle, salt, std::move(want.keys)};
  }
  void release(uint64_t handle, const std::string& salt, const std::vector<Key>& keys) {
    if (handle == 0) return;
    cache_->release(handle);
    model_.release(salt, keys);
  }
  void evict(uint32_t n) {
    const uint32_t got = cache_->evict(n);
    ASSERT_EQ(got, model_.evict(n).size());
  }

  // Room for `tokens` tokens of `seq`; evicts from the cache when the pool is short.
  bool grow(plinth_seq_id seq, uint32_t tokens) {
    const uint32_t need = pool_.kv->blocks_needed(seq, tokens);
    const uint32_t free = pool_.tables().num_free_blocks();
    if (need > free) evict(need - free + pick(2));
    std::array<plinth_block_copy, 1> copies{};
    try {
      EXPECT_EQ(pool_.kv->allocate(seq, tokens, copies), 0u) << "attached blocks are full";
      return true;
    } catch (const plinth::sdk::Error& e) {
      EXPECT_EQ(e.status(), PLINTH_ERR_NO_CAPACITY);
      ++no_capacity_;
      return false;
    }
  }

  void admit() {
    if (seqs_.size() >= 5) return finish(true);
    Seq s;
    s.tokens = prompt();
    s.salt = salt();
    const size_t prompt_len = s.tokens.size();
    for (uint32_t i = pick(2 * p_.block_size + 1); i > 0; --i) s.tokens.push_back(pick(3));
    plinth_prefix_match m{};
    Floating lock = match(std::span<const int32_t>(s.tokens.data(), prompt_len), s.salt, &m);
    const plinth_seq_id id = next_seq_++;
    if (m.num_blocks > 0) {
      pool_.kv->attach(id, std::span<const int32_t>(m.blocks, m.num_blocks), m.num_tokens);
    }
    if (!grow(id, static_cast<uint32_t>(s.tokens.size()))) {
      pool_.kv->free_seq(id);
      release(lock.handle, lock.salt, lock.keys);
      return;
    }
    auto table = pool_.kv->block_table(id);
    s.blocks.assign(table.begin(), table.end());
    if (pick(2) == 0) {
      release(lock.handle, lock.salt, lock.keys);  // the host's usual order: attach, release
    } else {
      s.handle = lock.handle;  // held until the sequence finishes
      s.keys = std::move(lock.keys);
    }
    seqs_.emplace(id, std::move(s));
  }

  // Finishes (insert = true: caches its tokens, sometimes only a prefix) or aborts a sequence.
  void finish(bool insert) {
    if (seqs_.empty()) return;
    auto it = std::next(seqs_.begin(), pick(seqs_.size()));
    Seq& s = it->second;
    if (insert) {
      const size_t len = pick(4) != 0 ? s.tokens.size() : pick(s.tokens.size() + 1);
      std::span<const int32_t> tokens(s.tokens.data(), len);
      const uint64_t before = cache_->stats().num_inserted_blocks;
      cache_->insert(tokens, s.salt, s.blocks);
      auto want = model_.insert(tokens, s.salt, s.blocks);
      ASSERT_TRUE(want.has_value()) << "the model refuses an insert the plugin took";
      ASSERT_EQ(cache_->stats().num_inserted_blocks - before, *want);
    }
    pool_.kv->free_seq(it->first);
    release(s.handle, s.salt, s.keys);
    seqs_.erase(it);
  }

  void query() {
    auto t = prompt();
    plinth_prefix_match m{};
    Floating f = match(t, salt(), &m);
    if (f.handle != 0) floating_.push_back(std::move(f));
    if (floating_.size() > 3) {
      release(floating_.front().handle, floating_.front().salt, floating_.front().keys);
      floating_.erase(floating_.begin());
    }
  }

  void release_one() {
    if (pick(4) == 0) return cache_->release(999999999);  // unknown: no-op
    for (auto& [id, s] : seqs_) {
      if (s.handle != 0 && pick(2) == 0) {
        release(s.handle, s.salt, s.keys);
        s.handle = 0;
        return;
      }
    }
    if (!floating_.empty()) {
      release(floating_.back().handle, floating_.back().salt, floating_.back().keys);
      floating_.pop_back();
    }
  }

  // Inserts the plugin must refuse, changing nothing: too few blocks, a block the cache holds
  // for another prefix, a block listed twice. Fresh token ids so no prefix is cached.
  void bad_insert() {
    std::vector<int32_t> tokens(2 * p_.block_size);
    for (auto& t : tokens) t = 1000000 + unique_++;
    std::vector<int32_t> blocks;
    const uint32_t kind = pick(3);
    if (kind == 0) {
      blocks = {0};
    } else if (kind == 1 && !model_.held().empty()) {
      blocks = {*std::next(model_.held().begin(), pick(model_.held().size())), 0};
    } else if (!seqs_.empty() && !seqs_.begin()->second.blocks.empty()) {
      blocks = {seqs_.begin()->second.blocks.back(), seqs_.begin()->second.blocks.back()};
    } else {
      return;
    }
    const std::string ns = salt();
    EXPECT_THROW(cache_->insert(tokens, ns, blocks), std::invalid_argument);
    EXPECT_FALSE(model_.insert(tokens, ns, blocks).has_value());
  }

  void check() {
    cache_->tree().check_invariants();
    max_nodes_ = std::max(max_nodes_, cache_->tree().num_nodes());
    pool_.tables().check_invariants();
    const auto& held = model_.held();
    auto cached = cache_->tree().cached_blocks();
    ASSERT_EQ(std::set<int32_t>(cached.begin(), cached.end()), held);
    const auto s = cache_->stats();
    ASSERT_EQ(s.num_cached_blocks, held.size());
    ASSERT_EQ(s.num_evictable_blocks, model_.num_evictable());
    ASSERT_EQ(s.num_queried_tokens, queried_);
    ASSERT_EQ(s.num_hit_tokens, hit_);
    std::vector<uint32_t> want(p_.num_blocks, 0);
    size_t handles = floating_.size();
    for (const auto& [id, seq] : seqs_) {
      for (int32_t b : seq.blocks) ++want[static_cast<size_t>(b)];
      handles += seq.handle != 0 ? 1 : 0;
    }
    for (int32_t b : held) ++want[static_cast<size_t>(b)];
    for (uint32_t b = 0; b < p_.num_blocks; ++b) {
      const auto id = static_cast<int32_t>(b);
      ASSERT_EQ(pool_.tables().ref_count(id), want[b]) << "block " << b;
      ASSERT_EQ(pool_.tables().external_refs(id), held.count(id)) << "block " << b;
    }
    ASSERT_EQ(cache_->tree().num_handles(), handles);
    if (p_.cap > 0) {
      ASSERT_LE(s.num_cached_blocks, p_.cap);
    }
  }

  Params p_;
  plinth::test::KvPool pool_;  // outlives the cache
  plinth::test::FakeHost host_;
  std::unique_ptr<PrefixRadixPlugin> cache_;
  ReferenceModel model_;
  std::mt19937 rng_;
  std::array<std::vector<int32_t>, 6> docs_;
  const std::array<std::string, 3> salts_{std::string(), std::string("a"), std::string("a\0", 2)};
  std::map<plinth_seq_id, Seq> seqs_;
  std::vector<Floating> floating_;
  plinth_seq_id next_seq_ = 1;
  uint64_t queried_ = 0, hit_ = 0;
  int no_capacity_ = 0;
  size_t max_nodes_ = 0;
  int32_t unique_ = 0;
};

}  // namespace

TEST(PrefixRadixInvariants, RandomOpsBlockSize4) {
  Simulation({4, 64, 0, 1, 20000}).run();
}
TEST(PrefixRadixInvariants, RandomOpsBlockSize1) {
  Simulation({1, 48, 0, 2, 12000}).run();
}
TEST(PrefixRadixInvariants, RandomOpsBlockSize16) {
  Simulation({16, 40, 0, 3, 8000}).run();
}
TEST(PrefixRadixInvariants, RandomOpsWithCap) {
  Simulation({4, 40, 12, 4, 20000}).run();
}
// A cap below the longest prompts: inserts must evict around the path they extend.
TEST(PrefixRadixInvariants, RandomOpsWithCapBelowPromptLength) {
  Simulation({4, 40, 5, 5, 10000}).run();
}
