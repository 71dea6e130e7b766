// GGUF v3 reader: a memory-mapped model file with its metadata and tensor table.
// Source: ggml docs/gguf.md (file structure, value types, alignment) and ggml/src/gguf.cpp (the
// checks llama.cpp applies). Little-endian files of version 2 and 3 (identical layout) are read.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "model/ggml_type.hpp"
#include "model/gguf_error.hpp"
#include "model/gguf_value.hpp"
#include "model/model_config.hpp"

namespace plinth {

class MappedFile;

/// One entry of the tensor table. Validated at open: 1..4 dims, each > 0, element count and byte
/// size without overflow, dims[0] a multiple of the type's block size, data inside the file.
struct GgufTensor {
  std::string name;
  GgmlType type = GgmlType::kF32;
  std::vector<uint64_t> dims;  // ggml order: dims[0] = ne0, the contiguous (row) dimension; a
                               // linear layer in -> out is {in, out}
  uint64_t offset = 0;         // absolute byte offset in the file (aligned data start + relative)
  uint64_t nbytes = 0;         // num_elements / block_size * type_size
  const std::byte* data = nullptr;  // into the mapping; valid while the GgufFile lives
  uint64_t num_elements() const;
};

/// A parsed, memory-mapped GGUF file. Immutable after open(), so every const member may be called
/// from any thread concurrently. Tensor data is not copied: GgufTensor::data points into the
/// read-only mapping, which lives as long as this object.
class GgufFile {
 public:
  /// Maps and parses `path`; every malformed or unsupported input throws GgufError naming the
  /// byte offset and the field (never a crash, never an allocation larger than the file).
  static std::unique_ptr<GgufFile> open(const std::string& path);
  ~GgufFile();
  GgufFile(const GgufFile&) = delete;
  GgufFile& operator=(const GgufFile&) = delete;

  const std::string& path() const { return path_; }
  uint32_t version() const { return version_; }
  /// general.alignment, or 32 when absent; a power of two.
  uint64_t alignment() const { return alignment_; }
  /// Absolute offset of the tensor data section (end of the tensor table, aligned up).
  uint64_t data_offset() const { return data_offset_; }
  /// File size in bytes.
  uint64_t size() const;

  bool has(std::string_view key) const;
  /// The decoded value of `key`, or nullptr when absent (for nested arrays and generic dumps).
  const GgufValue* find_value(std::string_view key) const;
  /// Byte offset where `key`'s key-value pair starts; throws GgufError when absent.
  uint64_t offset_of(std::string_view key) const;
  /// Type of `key`'s value; throws GgufError when absent.
  GgufValueType type_of(std::string_view key) const;

  // Typed getters throw GgufError naming the key when it is missing or of another type.
  std::string get_string(std::string_view key) const;
  uint64_t get_uint(
      std::string_view key) const;               // any unsigned or non-negative signed integer type
  int64_t get_int(std::string_view key) const;   // any integer type that fits int64
  double get_float(std::string_view key) const;  // f32 or f64
  bool get_bool(std::string_view key) const;
  std::vector<std::string> get_string_array(std::string_view key) const;
  std::vector<int64_t> get_int_array(std::string_view key) const;   // array of any integer type
  std::vector<double> get_float_array(std::string_view key) const;  // array of f32 or f64
  /// Element count of an array value; throws GgufError when absent or not an array.
  uint64_t array_size(std::string_view key) const;

  // nullopt when absent; GgufError when present with another type.
  std::optional<std::string> find_string(std::string_view key) const;
  std::optional<uint64_t> find_uint(std::string_view key) const;
  std::optional<double> find_float(std::string_view key) const;
  std::optional<bool> find_bool(std::string_view key) const;

  /// Metadata keys in file order.
  std::vector<std::string> keys() const { return key_order_; }
  /// Tensor table in file order.
  const std::vector<GgufTensor>& tensors() const { return tensors_; }
  const GgufTensor* find_tensor(std::string_view name) const;  // nullptr when absent

 private:
  friend class GgufParser;
  struct Entry {
    GgufValue value;
    uint64_t offset;  // where the key-value pair starts, for messages
  };
  GgufFile() = default;
  const Entry& entry(std::string_view key) const;
  [[noreturn]] void wrong_type(std::string_view key, const Entry& e, const char* wanted) const;

  std::string path_;
  std::unique_ptr<MappedFile> mapping_;
  uint32_t version_ = 0;
  uint64_t alignment_ = 32;
  uint64_t data_offset_ = 0;
  std::map<std::string, Entry, std::less<>> kv_;
  std::vector<std::string> key_order_;
  std::vector<GgufTensor> tensors_;
  std::map<std::string, size_t, std::less<>> tensor_index_;
};

}  // namespace plinth
