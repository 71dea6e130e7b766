#include "kv_storage.hpp"

#include <cmath>
#include <cstring>
#include <limits>
#include <stdexcept>
#include <string>

#ifdef __linux__
#include <sys/mman.h>
#endif

#include "plinth/ggml_format.hpp"
#include "plinth/plugin.hpp"

namespace plinth::cpu {

uint16_t fp32_to_fp16(float f) {
  return ggml::f32_to_f16(f);  // the SDK's conversion (round to nearest even, NaN kept)
}

PagedKvStorage::PagedKvStorage(int64_t n_layers, int64_t n_kv_heads, int64_t head_dim,
                               KvDtype dtype)
    : n_layers_(n_layers), n_kv_heads_(n_kv_heads), head_dim_(head_dim), dtype_(dtype) {}

uint64_t PagedKvStorage::bytes_per_token() const {
  return static_cast<uint64_t>(2 * n_layers_ * row_elems() * elem_bytes());
}

void PagedKvStorage::allocate(uint32_t num_blocks, uint32_t block_size) {
  if (num_blocks == 0 || block_size == 0) {
    throw sdk::Error(PLINTH_ERR_INVALID_ARGUMENT,
                     "allocate_kv: num_blocks=" + std::to_string(num_blocks) +
                         " and block_size=" + std::to_string(block_size) + " must both be >= 1");
  }
  data_.reset();
  num_blocks_ = 0;
  block_size_ = 0;
  const uint64_t slots = static_cast<uint64_t>(num_blocks) * block_size;
  const uint64_t per = bytes_per_token();
  if (per != 0 && slots > std::numeric_limits<uint64_t>::max() / per) {
    throw sdk::Error(PLINTH_ERR_INVALID_ARGUMENT, "allocate_kv: size overflows");
  }
  const uint64_t bytes = slots * per;
  auto* p = static_cast<unsigned char*>(std::calloc(static_cast<size_t>(bytes), 1));
  if (p == nullptr) {
    throw sdk::Error(PLINTH_ERR_OUT_OF_MEMORY,
                     "allocate_kv: cannot allocate " + std::to_string(bytes) + " bytes for " +
                         std::to_string(num_blocks) + " blocks of " + std::to_string(block_size) +
                         " tokens; lower the KV cache size");
  }
#ifdef __linux__
  // Transparent huge pages where the system allows them on request ("madvise" mode, Debian's
  // default): the advice covers the 2 MiB-aligned part of the range; failure changes nothing.
  constexpr uintptr_t kHuge = uintptr_t{2} << 20;
  // The aligned bounds as offsets from p (pointer arithmetic, no integer turned into a pointer).
  const uintptr_t addr = reinterpret_cast<uintptr_t>(p);
  const uintptr_t lo = ((addr + kHuge - 1) & ~(kHuge - 1)) - addr;
  const uintptr_t hi = ((addr + bytes) & ~(kHuge - 1)) - addr;
  if (hi > lo && hi <= bytes) (void)madvise(p + lo, hi - lo, MADV_HUGEPAGE);
#endif
  data_.reset(p);
  num_blocks_ = num_blocks;
  block_size_ = block_size;
}

void PagedKvStorage::write(int64_t layer, int64_t slot, const float* k, const float* v) {
  const int64_t n = head_dim_;
  const float* src[2] = {k, v};
  for (int c = 0; c < 2; ++c) {
    for (int64_t g = 0; g < n_kv_heads_; ++g) {
      unsigned char* dst = data_.get() + element_offset(layer, c, slot, g) * elem_bytes();
      const float* from = src[c] + g * head_dim_;
      if (dtype_ == KvDtype::kF32) {
        std::memcpy(dst, from, static_cast<size_t>(n) * sizeof(float));
      } else {
        auto* h = reinterpret_cast<uint16_t*>(dst);
        for (int64_t i = 0; i < n; ++i) h[i] = fp32_to_fp16(from[i]);
      }
    }
  }
}

void PagedKvStorage::copy_block(int32_t src, int32_t dst) {
  for (const int32_t id : {src, dst}) {
    if (id < 0 || static_cast<uint32_t>(id) >= num_blocks_) {
      throw std::invalid_argument("copy_blocks: block id " + std::to_string(id) +
                                  " is outside [0, num_blocks=" + std::to_string(num_blocks_) +
                                  ")");
    }
  }
  if (src == dst) return;
  const size_t bytes = static_cast<size_t>(block_size_ * row_elems() * elem_bytes());
  for (int64_t l = 0; l < n_layers_; ++l) {
    for (int c = 0; c < 2; ++c) {
      const int64_t s0 = static_cast<int64_t>(src) * block_size_;
      const int64_t d0 = static_cast<int64_t>(dst) * block_size_;
      std::memcpy(data_.get() + element_offset(l, c, d0, 0) * elem_bytes(),
                  data_.get() + element_offset(l, c, s0, 0) * elem_bytes(), bytes);
    }
  }
}

}  // namespace plinth::cpu
