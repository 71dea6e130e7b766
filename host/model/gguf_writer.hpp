// GGUF v3 writer: metadata of every value type and tensors of the ggml types plinth reads, laid
// out as ggml/docs/gguf.md specifies and as ggml/src/gguf.cpp writes it: header, key-value pairs,
// tensor infos, zero padding to the alignment, then each tensor's data at an aligned offset,
// followed by zero padding to the alignment (the last tensor too, as ggml does).
// Everything is little-endian, the only byte order plinth's reader accepts.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "model/ggml_type.hpp"
#include "model/gguf_value.hpp"

namespace plinth {

// --- Values ---------------------------------------------------------------------------------
// Builders for GgufValue (host/model/gguf_value.hpp). Each throws std::invalid_argument for a
// type of the wrong kind or a value the type cannot hold.

/// An unsigned integer of `type` UINT8/16/32/64; `v` must fit the type.
GgufValue gguf_uint(GgufValueType type, uint64_t v);
/// A signed integer of `type` INT8/16/32/64; `v` must fit the type.
GgufValue gguf_int(GgufValueType type, int64_t v);
/// A float of `type` FLOAT32 (written rounded to float) or FLOAT64.
GgufValue gguf_float(GgufValueType type, double v);
GgufValue gguf_bool(bool v);
/// A string; its bytes are written as given (the spec says UTF-8; not checked).
GgufValue gguf_string(std::string v);
/// An array whose elements all have type `elem_type` (any type, ARRAY for nested arrays).
GgufValue gguf_array(GgufValueType elem_type, std::vector<GgufValue> items);
/// An array of strings.
GgufValue gguf_string_array(const std::vector<std::string>& items);

// --- Layout ---------------------------------------------------------------------------------

/// Where each part of a file GgufWriter writes lands: absolute byte offsets from the file start.
struct GgufLayout {
  struct Kv {
    std::string key;
    uint64_t begin = 0;  // the pair (key length) starts here
    uint64_t type = 0;   // the uint32 value type
    uint64_t value = 0;  // the value payload (for an array: its element type)
  };
  struct TensorInfo {
    std::string name;
    uint64_t begin = 0;     // the info (name length) starts here
    uint64_t n_dims = 0;    // uint32 n_dims
    uint64_t dims = 0;      // the first uint64 dim
    uint64_t type = 0;      // uint32 ggml type
    uint64_t offset = 0;    // the uint64 data offset field
    uint64_t relative = 0;  // the value written there: data start relative to data_offset
    uint64_t data = 0;      // absolute offset of the tensor's first data byte
    uint64_t nbytes = 0;    // data bytes, without padding
  };
  static constexpr uint64_t kVersion = 4;      // uint32 version
  static constexpr uint64_t kTensorCount = 8;  // uint64 tensor_count
  static constexpr uint64_t kKvCount = 16;     // uint64 metadata_kv_count
  std::vector<Kv> kvs;                         // in file order
  std::vector<TensorInfo> tensors;             // in file order
  uint64_t data_offset = 0;                    // start of the data section, aligned
  uint64_t file_size = 0;                      // bytes in the file
};

// --- Writer ---------------------------------------------------------------------------------

/// Builds one GGUF v3 file from metadata and tensors, in the order they were added. Every add
/// validates its input (std::invalid_argument naming the key or tensor), so that a file written
/// is one plinth's reader (GgufFile::open) accepts for any values the reader itself can hold;
/// nesting depth and string encodings are not restricted.
///
/// The alignment is the value of a `general.alignment` key when one is added (an unsigned or
/// positive integer, a power of two in 1..2^30, as the reader requires), else 32 (the spec's
/// default). Tensor data is referenced, not copied, unless given as an owned vector.
///
/// Copyable; copies share owned tensor data. Not thread-safe for concurrent modification; const
/// members may run concurrently.
class GgufWriter {
 public:
  /// Appends a metadata pair. Throws std::invalid_argument for an empty or repeated key, a value
  /// whose data does not match its type (recursively for arrays), or a bad general.alignment.
  void add(const std::string& key, GgufValue value);
  /// Replaces the value of an existing key in place (same position), or appends it when absent.
  /// Same checks as add().
  void set(const std::string& key, GgufValue value);
  /// True when `key` was added.
  bool has(const std::string& key) const;

  // Shorthands for add(key, gguf_...(...)).
  void add_u32(const std::string& key, uint32_t v);
  void add_f32(const std::string& key, float v);
  void add_string(const std::string& key, const std::string& v);
  void add_bool(const std::string& key, bool v);

  /// Appends a tensor whose data the writer references: `data` must stay valid and unchanged
  /// until the last write. `dims` in ggml order (dims[0] = the contiguous row length). Throws
  /// std::invalid_argument for an empty or repeated name, 0 or more than 4 dims, a 0 dim, a
  /// dims[0] that is not a multiple of the type's block size, or data.size() other than the
  /// type's byte size for `dims` (num_elements / block_size * type_size).
  void add_tensor(const std::string& name, GgmlType type, std::vector<uint64_t> dims,
                  std::span<const std::byte> data);
  /// The same, the writer owning `data`.
  void add_tensor(const std::string& name, GgmlType type, std::vector<uint64_t> dims,
                  std::vector<std::byte> data);

  /// The alignment of tensor data in bytes (see the class comment).
  uint64_t alignment() const { return alignment_; }
  size_t num_kvs() const { return kvs_.size(); }
  size_t num_tensors() const { return tensors_.size(); }

  /// The offsets the file will have. Cheap: computed from the sizes, nothing is written.
  GgufLayout layout() const;

  /// Writes the file through `sink`, called with consecutive chunks (never empty) that together
  /// are the file, layout().file_size bytes. Exceptions from `sink` propagate.
  void write(const std::function<void(const std::byte* data, size_t size)>& sink) const;

  /// The whole file in memory (for small files and tests).
  std::vector<uint8_t> build() const;

  /// Writes the file to `path` atomically: into a new temporary file in the same directory
  /// (`<path>.tmp.XXXXXX`, mode 0644), flushed to disk, then `check(temporary path)` when given
  /// (e.g. re-open and validate it), then renamed over `path`. On any error, the check's
  /// included, the temporary file is removed and `path` is left as it was. Errors: the directory
  /// missing or not writable, `path` holding something other than a regular file (a directory,
  /// FIFO, device node, socket or a symbolic link to one; checked before writing and again
  /// before the rename, model/output_path.hpp), a short write (disk full, file size limit) ->
  /// std::runtime_error naming the path and the reason; exceptions from `check` propagate
  /// unchanged.
  void write_file(const std::string& path,
                  const std::function<void(const std::string& tmp_path)>& check = {}) const;

 private:
  struct Kv {
    std::string key;
    GgufValue value;
  };
  struct Tensor {
    std::string name;
    GgmlType type;
    std::vector<uint64_t> dims;
    std::span<const std::byte> data;
    std::shared_ptr<const std::vector<std::byte>> owned;  // keeps `data` alive when owned
  };
  void check_kv(const std::string& key, const GgufValue& value) const;
  void apply_alignment(const std::string& key, const GgufValue& value);

  std::vector<Kv> kvs_;
  std::vector<Tensor> tensors_;
  uint64_t alignment_ = 32;
};

}  // namespace plinth
