#pragma once
// Array structs at the stride of the reader's ABI minor. Items of an array that crosses the ABI
// (plinth_sched_result, plinth_spec_verify) carry no struct_size; they grow only at the end, and
// the host passes the array at PLINTH_ABI_1_<m>_SIZEOF_<NAME> bytes per item, m being the minor
// the plugin declares, so a plugin indexes it with the layout it was compiled against (abi.h,
// "Array structs"; docs/architecture.md, "The ABI and its versions").

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

#include "plinth/plinth.h"

namespace plinth {

namespace detail {
inline void check_stride_minor(uint32_t abi_minor, const char* name) {
  if (abi_minor > PLINTH_ABI_MINOR) {
    throw std::invalid_argument(std::string(name) + ": ABI 1." + std::to_string(abi_minor) +
                                " is newer than the host's 1." + std::to_string(PLINTH_ABI_MINOR));
  }
}
}  // namespace detail

/// PLINTH_ABI_1_<abi_minor>_SIZEOF_SCHED_RESULT: the stride of scheduler.update's results for a
/// scheduler of that minor. Throws std::invalid_argument for a minor newer than the host's (the
/// loader refuses such plugins before this is reached).
inline size_t sched_result_stride(uint32_t abi_minor) {
  detail::check_stride_minor(abi_minor, "sched_result_stride");
  // NOLINTBEGIN(bugprone-branch-clone): a struct that did not grow in a minor keeps its size
  switch (abi_minor) {
    case 0:
      return PLINTH_ABI_1_0_SIZEOF_SCHED_RESULT;
    case 1:
      return PLINTH_ABI_1_1_SIZEOF_SCHED_RESULT;
    case 2:
      return PLINTH_ABI_1_2_SIZEOF_SCHED_RESULT;
    case 3:
      return PLINTH_ABI_1_3_SIZEOF_SCHED_RESULT;
    default:
      return PLINTH_ABI_1_4_SIZEOF_SCHED_RESULT;
  }
  // NOLINTEND(bugprone-branch-clone)
}

/// PLINTH_ABI_1_<abi_minor>_SIZEOF_SPEC_VERIFY: the stride of speculator.verify's items. Throws
/// std::invalid_argument as sched_result_stride does.
inline size_t spec_verify_stride(uint32_t abi_minor) {
  detail::check_stride_minor(abi_minor, "spec_verify_stride");
  // NOLINTBEGIN(bugprone-branch-clone): a struct that did not grow in a minor keeps its size
  switch (abi_minor) {
    case 0:
      return PLINTH_ABI_1_0_SIZEOF_SPEC_VERIFY;
    case 1:
      return PLINTH_ABI_1_1_SIZEOF_SPEC_VERIFY;
    case 2:
      return PLINTH_ABI_1_2_SIZEOF_SPEC_VERIFY;
    case 3:
      return PLINTH_ABI_1_3_SIZEOF_SPEC_VERIFY;
    default:
      return PLINTH_ABI_1_4_SIZEOF_SPEC_VERIFY;
  }
  // NOLINTEND(bugprone-branch-clone)
}

// A new minor adds its case above (and its constants in abi_versions.h).
static_assert(PLINTH_ABI_MINOR == 4, "array_stride.hpp: add the new minor's strides");

/// A copy of `items` laid out at `stride` bytes per item: item i's first min(stride, sizeof(T))
/// bytes at byte i * stride, zeros past sizeof(T) when the stride is wider. Pointers inside the
/// items are copied as they are (they must outlive the call that reads the array). Owns its
/// bytes; data() is valid while the object lives and is not moved from.
template <class T>
class StridedArray {
 public:
  /// Throws std::invalid_argument when stride is 0 or not a multiple of alignof(T) (the reader
  /// indexes it as T[]), or when items hold 2^32 or more entries (the ABI counts in uint32_t).
  StridedArray(std::span<const T> items, size_t stride)
      : bytes_(items.size() * stride), size_(items.size()), stride_(stride) {
    if (stride == 0 || stride % alignof(T) != 0) {
      throw std::invalid_argument("StridedArray: stride " + std::to_string(stride) +
                                  " is not a positive multiple of the item alignment " +
                                  std::to_string(alignof(T)));
    }
    if (items.size() > UINT32_MAX) {
      throw std::invalid_argument("StridedArray: " + std::to_string(items.size()) +
                                  " items do not fit a uint32_t count");
    }
    const size_t n = std::min(stride, sizeof(T));
    for (size_t i = 0; i < items.size(); ++i) {
      std::memcpy(bytes_.data() + i * stride, &items[i], n);
    }
  }

  /// The first item, as the C function takes the array (NULL when empty); index it at stride().
  const T* data() const {
    return bytes_.empty() ? nullptr : reinterpret_cast<const T*>(bytes_.data());
  }
  /// The number of items, as the ABI counts them.
  uint32_t size() const { return static_cast<uint32_t>(size_); }
  /// Bytes per item.
  size_t stride() const { return stride_; }
  /// The packed bytes, size() * stride() of them.
  std::span<const std::byte> bytes() const { return bytes_; }

 private:
  std::vector<std::byte> bytes_;  // from operator new: aligned for any T of the ABI
  size_t size_;
  size_t stride_;
};

}  // namespace plinth
