#include "block_tables.hpp"

#include <plinth/plugin.hpp>

#include <algorithm>
#include <stdexcept>
#include <string>
#include <unordered_set>

namespace plinth::kv_paged {

namespace {
std::string seq_name(plinth_seq_id seq) {
  return "sequence " + std::to_string(seq);
}
}  // namespace

BlockTables::BlockTables(uint32_t block_size, uint32_t num_blocks)
    : block_size_(block_size), pool_(num_blocks) {
  if (block_size == 0 || block_size > 256 || (block_size & (block_size - 1)) != 0) {
    throw std::invalid_argument("kv_paged: block_size must be a power of two in 1..256, got " +
                                std::to_string(block_size));
  }
  table_refs_.assign(num_blocks, 0);
  external_refs_.assign(num_blocks, 0);
  fill_.assign(num_blocks, 0);
}

plinth_kv_stats BlockTables::stats() const {
  plinth_kv_stats s{};
  s.struct_size = sizeof(s);
  s.num_blocks = pool_.num_blocks();
  s.num_used_blocks = pool_.num_used();
  s.num_free_blocks = pool_.num_free();
  s.num_allocated_slots = blocks_in_tables_ * block_size_;
  s.num_used_slots = used_slots_;
  return s;
}

uint32_t BlockTables::tokens_in_block(uint32_t num_tokens, size_t index) const {
  uint64_t start = static_cast<uint64_t>(index) * block_size_;
  if (num_tokens <= start) return 0;
  return static_cast<uint32_t>(std::min<uint64_t>(block_size_, num_tokens - start));
}

void BlockTables::set_fill(int32_t block, uint32_t tokens) {
  auto b = static_cast<size_t>(block);
  if (table_refs_[b] > 0) used_slots_ = used_slots_ - fill_[b] + tokens;
  fill_[b] = tokens;
}

void BlockTables::add_table_ref(int32_t block, uint32_t tokens) {
  auto b = static_cast<size_t>(block);
  if (table_refs_[b]++ == 0) {
    ++blocks_in_tables_;
    used_slots_ += fill_[b];
  }
  if (tokens > fill_[b]) set_fill(block, tokens);
}

void BlockTables::release_if_freed(int32_t block, bool freed) {
  if (freed) fill_[static_cast<size_t>(block)] = 0;
}

void BlockTables::drop_table_ref(int32_t block) {
  auto b = static_cast<size_t>(block);
  if (--table_refs_[b] == 0) {
    --blocks_in_tables_;
    used_slots_ -= fill_[b];
  }
  release_if_freed(block, pool_.unref(block));
}

uint32_t BlockTables::blocks_needed(plinth_seq_id seq, uint32_t num_tokens) const {
  auto it = seqs_.find(seq);
  if (it == seqs_.end()) return static_cast<uint32_t>(blocks_for(num_tokens));
  const Sequence& s = it->second;
  if (num_tokens <= s.num_tokens) return 0;
  uint64_t fresh = blocks_for(num_tokens) - s.blocks.size();
  bool cow = s.num_tokens % block_size_ != 0 && pool_.ref_count(s.blocks.back()) > 1;
  return static_cast<uint32_t>(fresh + (cow ? 1 : 0));
}

uint32_t BlockTables::allocate(plinth_seq_id seq, uint32_t num_tokens,
                               std::span<plinth_block_copy> copies) {
  auto it = seqs_.find(seq);
  if (it != seqs_.end() && num_tokens <= it->second.num_tokens) return 0;
  uint32_t need = blocks_needed(seq, num_tokens);
  if (need > pool_.num_free()) {
    throw sdk::Error(PLINTH_ERR_NO_CAPACITY, "kv_paged: " + seq_name(seq) + " needs " +
                                                 std::to_string(need) + " free blocks for " +
                                                 std::to_string(num_tokens) + " tokens, " +
                                                 std::to_string(pool_.num_free()) + " of " +
                                                 std::to_string(pool_.num_blocks()) + " are free");
  }
  uint32_t cur = it == seqs_.end() ? 0 : it->second.num_tokens;
  bool cow =
      it != seqs_.end() && cur % block_size_ != 0 && pool_.ref_count(it->second.blocks.back()) > 1;
  if (cow && copies.empty()) {
    throw std::invalid_argument("kv_paged: " + seq_name(seq) +
                                " must copy its shared last block before writing it, but "
                                "copies_capacity is 0; pass room for 1 copy");
  }
  if (it == seqs_.end()) it = seqs_.emplace(seq, Sequence{}).first;
  Sequence& s = it->second;
  std::vector<int32_t> fresh;
  fresh.reserve(need);
  pool_.allocate(need, fresh);  // cannot fail: checked above
  size_t next = 0;
  uint32_t num_copies = 0;
  if (cow) {
    int32_t src = s.blocks.back();
    int32_t dst = fresh[next++];
    copies[0] = plinth_block_copy{src, dst};
    num_copies = 1;
    drop_table_ref(src);
    s.blocks.back() = dst;
    add_table_ref(dst, tokens_in_block(cur, s.blocks.size() - 1));
  }
  while (next < fresh.size()) {
    s.blocks.push_back(fresh[next++]);
    add_table_ref(s.blocks.back(), 0);
  }
  // The slots [cur, num_tokens) now hold (or are about to hold) tokens.
  for (size_t i = cur / block_size_; i < s.blocks.size(); ++i) {
    uint32_t t = tokens_in_block(num_tokens, i);
    if (t > fill_[static_cast<size_t>(s.blocks[i])]) set_fill(s.blocks[i], t);
  }
  s.num_tokens = num_tokens;
  return num_copies;
}

std::span<const int32_t> BlockTables::block_table(plinth_seq_id seq) const {
  auto it = seqs_.find(seq);
  if (it == seqs_.end()) {
    throw sdk::Error(PLINTH_ERR_NOT_FOUND, "kv_paged: unknown " + seq_name(seq));
  }
  return it->second.blocks;
}

uint32_t BlockTables::num_tokens(plinth_seq_id seq) const {
  auto it = seqs_.find(seq);
  if (it == seqs_.end()) {
    throw sdk::Error(PLINTH_ERR_NOT_FOUND, "kv_paged: unknown " + seq_name(seq));
  }
  return it->second.num_tokens;
}

void BlockTables::free_seq(plinth_seq_id seq) {
  auto it = seqs_.find(seq);
  if (it == seqs_.end()) return;
  // Last block first, so that LIFO reuse hands the sequence's first block out first again.
  for (auto b = it->second.blocks.rbegin(); b != it->second.blocks.rend(); ++b) drop_table_ref(*b);
  seqs_.erase(it);
}

void BlockTables::truncate(plinth_seq_id seq, uint32_t num_tokens) {
  auto it = seqs_.find(seq);
  if (it == seqs_.end()) {
    throw sdk::Error(PLINTH_ERR_NOT_FOUND, "kv_paged: truncate: unknown " + seq_name(seq));
  }
  Sequence& s = it->second;
  if (num_tokens > s.num_tokens) {
    throw std::invalid_argument("kv_paged: truncate: " + seq_name(seq) + " holds " +
                                std::to_string(s.num_tokens) + " tokens, cannot keep " +
                                std::to_string(num_tokens));
  }
  auto keep = static_cast<size_t>(blocks_for(num_tokens));
  while (s.blocks.size() > keep) {
    drop_table_ref(s.blocks.back());
    s.blocks.pop_back();
  }
  s.num_tokens = num_tokens;
  // A block only this table holds now has exactly the slots the table keeps in it.
  if (!s.blocks.empty() && pool_.ref_count(s.blocks.back()) == 1) {
    set_fill(s.blocks.back(), tokens_in_block(num_tokens, s.blocks.size() - 1));
  }
}

void BlockTables::fork(plinth_seq_id parent, plinth_seq_id child) {
  auto it = seqs_.find(parent);
  if (it == seqs_.end()) {
    throw sdk::Error(PLINTH_ERR_NOT_FOUND, "kv_paged: fork: unknown parent " + seq_name(parent));
  }
  if (parent == child || seqs_.count(child) != 0) {
    throw std::invalid_argument("kv_paged: fork: child " + seq_name(child) +
                                " exists already; pass a new sequence id");
  }
  Sequence copy = it->second;
  for (size_t i = 0; i < copy.blocks.size(); ++i) {
    pool_.ref(copy.blocks[i]);
    add_table_ref(copy.blocks[i], tokens_in_block(copy.num_tokens, i));
  }
  seqs_.emplace(child, std::move(copy));
}

void BlockTables::attach(plinth_seq_id seq, std::span<const int32_t> blocks, uint32_t num_tokens) {
  if (seqs_.count(seq) != 0) {
    throw std::invalid_argument("kv_paged: attach: " + seq_name(seq) +
                                " exists already; attach starts a new sequence");
  }
  if (blocks.size() != blocks_for(num_tokens)) {
    throw std::invalid_argument("kv_paged: attach: " + std::to_string(num_tokens) +
                                " tokens need " + std::to_string(blocks_for(num_tokens)) +
                                " blocks of " + std::to_string(block_size_) + ", got " +
                                std::to_string(blocks.size()));
  }
  pool_.check_used(blocks);
  std::unordered_set<int32_t> seen;
  for (int32_t b : blocks) {
    if (!seen.insert(b).second) {
      throw std::invalid_argument("kv_paged: attach: block " + std::to_string(b) +
                                  " appears twice in the table");
    }
  }
  Sequence s{std::vector<int32_t>(blocks.begin(), blocks.end()), num_tokens};
  for (size_t i = 0; i < s.blocks.size(); ++i) {
    pool_.ref(s.blocks[i]);
    add_table_ref(s.blocks[i], tokens_in_block(num_tokens, i));
  }
  seqs_.emplace(seq, std::move(s));
}

void BlockTables::ref_blocks(std::span<const int32_t> blocks) {
  pool_.check_used(blocks);
  for (int32_t b : blocks) {
    pool_.ref(b);
    ++external_refs_[static_cast<size_t>(b)];
  }
}

void BlockTables::unref_blocks(std::span<const int32_t> blocks) {
  pool_.check_unref(blocks);  // range, double free
  std::unordered_map<int32_t, uint32_t> drops;
  for (int32_t b : blocks) {
    if (++drops[b] > external_refs_[static_cast<size_t>(b)]) {
      throw std::invalid_argument(
          "kv_paged: unref_blocks: block " + std::to_string(b) + " has " +
          std::to_string(external_refs_[static_cast<size_t>(b)]) +
          " references from ref_blocks; the others belong to block tables (use free_seq)");
    }
  }
  for (int32_t b : blocks) {
    --external_refs_[static_cast<size_t>(b)];
    release_if_freed(b, pool_.unref(b));
  }
}

uint32_t BlockTables::external_refs(int32_t block) const {
  pool_.ref_count(block);  // range check
  return external_refs_[static_cast<size_t>(block)];
}

namespace {

[[noreturn]] void fail(const std::string& what) {
  throw std::logic_error("kv_paged invariant: " + what);
}

}  // namespace

void BlockTables::count_table_refs(std::vector<uint32_t>& table_refs,
                                   std::vector<uint32_t>& max_fill) const {
  const uint32_t n = pool_.num_blocks();
  for (const auto& [id, s] : seqs_) {
    if (s.blocks.size() != blocks_for(s.num_tokens)) {
      fail(seq_name(id) + " holds " + std::to_string(s.blocks.size()) + " blocks for " +
           std::to_string(s.num_tokens) + " tokens");
    }
    std::unordered_set<int32_t> seen;
    for (size_t i = 0; i < s.blocks.size(); ++i) {
      int32_t b = s.blocks[i];
      if (b < 0 || static_cast<uint32_t>(b) >= n) fail(seq_name(id) + " has a bad block id");
      if (!seen.insert(b).second)
        fail(seq_name(id) + " holds block " + std::to_string(b) + " twice");
      ++table_refs[static_cast<size_t>(b)];
      max_fill[static_cast<size_t>(b)] =
          std::max(max_fill[static_cast<size_t>(b)], tokens_in_block(s.num_tokens, i));
    }
  }
}

BlockTables::Totals BlockTables::check_block_counters(const std::vector<uint32_t>& table_refs,
                                                      const std::vector<uint32_t>& max_fill) const {
  const uint32_t n = pool_.num_blocks();
  Totals t;
  for (uint32_t b = 0; b < n; ++b) {
    auto id = static_cast<int32_t>(b);
    uint32_t rc = pool_.ref_count(id);
    if (rc != table_refs[b] + external_refs_[b]) {
      fail("block " + std::to_string(b) + " has ref count " + std::to_string(rc) + " but " +
           std::to_string(table_refs[b]) + " table + " + std::to_string(external_refs_[b]) +
           " external references");
    }
    if (table_refs[b] != table_refs_[b]) fail("table ref counter of block " + std::to_string(b));
    if (rc > 0) ++t.used;
    if (table_refs[b] > 0) {
      ++t.in_tables;
      t.used_slots += fill_[b];
      if (fill_[b] < max_fill[b] || fill_[b] > block_size_) {
        fail("fill of block " + std::to_string(b) + " is " + std::to_string(fill_[b]));
      }
    }
  }
  return t;
}

void BlockTables::check_free_list() const {
  std::vector<bool> on_free_list(pool_.num_blocks(), false);
  for (int32_t b : pool_.free_list()) {
    if (on_free_list[static_cast<size_t>(b)]) fail("block " + std::to_string(b) + " freed twice");
    on_free_list[static_cast<size_t>(b)] = true;
    if (pool_.ref_count(b) != 0) fail("block " + std::to_string(b) + " is free and referenced");
  }
}

void BlockTables::check_invariants() const {
  const uint32_t n = pool_.num_blocks();
  std::vector<uint32_t> table_refs(n, 0);
  std::vector<uint32_t> max_fill(n, 0);
  count_table_refs(table_refs, max_fill);
  const Totals t = check_block_counters(table_refs, max_fill);
  check_free_list();
  if (t.used + pool_.num_free() != n) fail("free + used != total");
  if (t.in_tables != blocks_in_tables_ || t.used_slots != used_slots_) fail("slot counters");
}

}  // namespace plinth::kv_paged
