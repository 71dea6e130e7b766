// Bounds-checked little-endian reads over the mapped bytes of a GGUF file (internal).
#pragma once

#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>
#include <type_traits>

#include "model/gguf_error.hpp"

namespace plinth {

static_assert(std::endian::native == std::endian::little,
              "the GGUF reader maps little-endian files as is; a big-endian host needs byte swaps");

/// A read position in [0, size]; every read checks the bytes left first and throws GgufError
/// naming the offset, the field and how many bytes were needed and left.
class GgufCursor {
 public:
  GgufCursor(const std::string& path, const std::byte* base, uint64_t size)
      : path_(path), base_(base), size_(size) {}

  uint64_t pos() const { return pos_; }
  uint64_t size() const { return size_; }
  uint64_t remaining() const { return size_ - pos_; }
  const std::string& path() const { return path_; }

  [[noreturn]] void fail(uint64_t offset, std::string_view field, const std::string& what) const {
    throw GgufError(path_, offset, std::string(field), what);
  }

  void need(uint64_t n, std::string_view field) const {
    if (n > remaining()) {
      fail(pos_, field,
           "file truncated: need " + std::to_string(n) + " bytes, " + std::to_string(remaining()) +
               " left (file size " + std::to_string(size_) + ")");
    }
  }

  template <class T>
  T read(std::string_view field) {
    static_assert(std::is_trivially_copyable_v<T>);
    need(sizeof(T), field);
    T v;
    std::memcpy(&v, base_ + pos_, sizeof(T));
    pos_ += sizeof(T);
    return v;
  }

  /// gguf_string_t: uint64 length + that many bytes (no terminator).
  std::string read_string(std::string_view field) {
    const uint64_t start = pos_;
    const auto len = read<uint64_t>(field);
    if (len > remaining()) {
      fail(start, field,
           "string length " + std::to_string(len) + " points past the end of the file (" +
               std::to_string(remaining()) + " bytes left)");
    }
    std::string s(reinterpret_cast<const char*>(base_ + pos_), static_cast<size_t>(len));
    pos_ += len;
    return s;
  }

 private:
  const std::string& path_;
  const std::byte* base_;
  uint64_t size_;
  uint64_t pos_ = 0;
};

}  // namespace plinth
