#include "block_pool.hpp"

#include <cstdint>
#include <stdexcept>
#include <string>
#include <unordered_map>

namespace plinth::kv_paged {

BlockPool::BlockPool(uint32_t num_blocks) {
  if (num_blocks == 0 || num_blocks > static_cast<uint32_t>(INT32_MAX)) {
    throw std::invalid_argument("kv_paged: num_blocks must be in 1.." + std::to_string(INT32_MAX) +
                                ", got " + std::to_string(num_blocks));
  }
  ref_counts_.assign(num_blocks, 0);
  free_list_.reserve(num_blocks);
  // Pushed in reverse so that the first allocations hand out 0, 1, 2 ...
  for (uint32_t i = num_blocks; i > 0; --i) free_list_.push_back(static_cast<int32_t>(i - 1));
}

bool BlockPool::allocate(uint32_t n, std::vector<int32_t>& out) {
  if (n > free_list_.size()) return false;
  out.reserve(out.size() + n);
  for (uint32_t i = 0; i < n; ++i) {
    int32_t b = free_list_.back();
    free_list_.pop_back();
    ref_counts_[static_cast<size_t>(b)] = 1;
    out.push_back(b);
  }
  return true;
}

void BlockPool::check_range(int32_t block) const {
  if (block < 0 || static_cast<size_t>(block) >= ref_counts_.size()) {
    throw std::invalid_argument("kv_paged: block id " + std::to_string(block) +
                                " is out of range 0.." + std::to_string(ref_counts_.size() - 1));
  }
}

uint32_t BlockPool::ref_count(int32_t block) const {
  check_range(block);
  return ref_counts_[static_cast<size_t>(block)];
}

void BlockPool::ref(int32_t block) {
  check_range(block);
  uint32_t& rc = ref_counts_[static_cast<size_t>(block)];
  if (rc == 0) {
    throw std::invalid_argument("kv_paged: block " + std::to_string(block) +
                                " is free; only a used block can gain a reference");
  }
  ++rc;
}

bool BlockPool::unref(int32_t block) {
  check_range(block);
  uint32_t& rc = ref_counts_[static_cast<size_t>(block)];
  if (rc == 0) {
    throw std::invalid_argument("kv_paged: block " + std::to_string(block) +
                                " is free already (double free)");
  }
  if (--rc == 0) {
    free_list_.push_back(block);
    return true;
  }
  return false;
}

void BlockPool::check_used(std::span<const int32_t> blocks) const {
  for (int32_t b : blocks) {
    if (ref_count(b) == 0) {
      throw std::invalid_argument("kv_paged: block " + std::to_string(b) +
                                  " is free; only a used block can gain a reference");
    }
  }
}

void BlockPool::check_unref(std::span<const int32_t> blocks) const {
  std::unordered_map<int32_t, uint32_t> drops;
  for (int32_t b : blocks) {
    uint32_t rc = ref_count(b);
    if (++drops[b] > rc) {
      throw std::invalid_argument("kv_paged: block " + std::to_string(b) + " has " +
                                  std::to_string(rc) +
                                  (rc == 0 ? " references: it is free already (double free)"
                                           : " references, fewer than the unrefs asked for"));
    }
  }
}

}  // namespace plinth::kv_paged
