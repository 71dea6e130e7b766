// The KV storage of backend_cpu: the K and V memory of the paged KV cache (PagedAttention, Kwon et
// al., SOSP 2023, §4). Which sequence owns which block is the kv_cache plugin's bookkeeping
// (plugins/kv_paged); this holds the rows and copies blocks as told.
#pragma once

#include <cstdint>
#include <cstdlib>
#include <memory>

#include "plinth/model.h"

namespace plinth::cpu {

/// Element type of the cached K and V.
enum class KvDtype { kF32, kF16 };

/// K and V of every layer for num_blocks * block_size token slots (slot = block * block_size +
/// offset). Layout, elements: for layer l and kind c (0 = K, 1 = V) a region
/// [num_blocks, n_kv_heads, block_size, head_dim], regions ordered (l, c) — head-major inside a
/// block, as vLLM's CPU and CUDA caches: the rows attention reads for one KV head are
/// block_size · head_dim contiguous elements per block (one 4 KiB run for 16 f32 rows of 64),
/// which the hardware prefetchers follow; a block of one layer/kind is one contiguous run.
/// Memory comes from calloc (untouched pages stay unmapped until written), advised for
/// transparent huge pages on Linux (fewer TLB misses while attention walks the blocks). Not
/// thread-safe for writers; concurrent readers are fine.
class PagedKvStorage {
 public:
  PagedKvStorage(int64_t n_layers, int64_t n_kv_heads, int64_t head_dim, KvDtype dtype);

  KvDtype dtype() const { return dtype_; }
  /// plinth_dtype of the elements (F32 or F16).
  int32_t plinth_dtype() const {
    return dtype_ == KvDtype::kF32 ? PLINTH_DTYPE_F32 : PLINTH_DTYPE_F16;
  }
  int64_t elem_bytes() const { return dtype_ == KvDtype::kF32 ? 4 : 2; }
  /// K and V of one token over all layers, bytes.
  uint64_t bytes_per_token() const;

  /// Replaces any earlier allocation with num_blocks * block_size zeroed slots. Throws
  /// sdk::Error(OUT_OF_MEMORY) when the allocation fails, INVALID_ARGUMENT for a zero count or
  /// a size that overflows.
  void allocate(uint32_t num_blocks, uint32_t block_size);
  bool allocated() const { return data_ != nullptr; }
  uint32_t num_blocks() const { return num_blocks_; }
  uint32_t block_size() const { return block_size_; }
  int64_t num_slots() const { return static_cast<int64_t>(num_blocks_) * block_size_; }
  int64_t row_elems() const { return n_kv_heads_ * head_dim_; }

  /// Stores k[n_kv_heads * head_dim] and v[same] of one token at `slot` of `layer` (converted
  /// to the cache dtype).
  void write(int64_t layer, int64_t slot, const float* k, const float* v);
  /// Start of the head_dim elements of KV head `head` at `slot` of `layer`, kind 0 = K, 1 = V;
  /// elements are float (F32) or IEEE half bits (F16).
  const void* head_row(int64_t layer, int kind, int64_t slot, int64_t head) const {
    return data_.get() + element_offset(layer, kind, slot, head) * elem_bytes();
  }
  /// Copies all layers' K and V of block `src` to block `dst` (no-op when equal). Throws
  /// std::invalid_argument naming the id when one is outside [0, num_blocks).
  void copy_block(int32_t src, int32_t dst);

 private:
  int64_t element_offset(int64_t layer, int kind, int64_t slot, int64_t head) const {
    const int64_t block = slot / block_size_, offset = slot % block_size_;
    return (layer * 2 + kind) * num_slots() * row_elems() +
           ((block * n_kv_heads_ + head) * block_size_ + offset) * head_dim_;
  }
  struct FreeDeleter {
    void operator()(unsigned char* p) const { std::free(p); }
  };

  int64_t n_layers_, n_kv_heads_, head_dim_;
  KvDtype dtype_;
  uint32_t num_blocks_ = 0, block_size_ = 0;
  std::unique_ptr<unsigned char[], FreeDeleter> data_;
};

/// float → IEEE half, round to nearest even (overflow → inf, NaN kept NaN).
uint16_t fp32_to_fp16(float f);

}  // namespace plinth::cpu
