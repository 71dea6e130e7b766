// Helpers for tests that make GGUF files with the project's writer (host/model/gguf_writer.hpp):
// tensors of a known byte pattern, named offsets of every field (so malformed variants can be made
// by patching bytes at a known offset) and a temporary directory.
#pragma once

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

#include "model/ggml_type.hpp"
#include "model/gguf_writer.hpp"

namespace plinth::test {

using Bytes = std::vector<uint8_t>;

/// Overwrites sizeof(T) bytes of `b` at `at` with `v` (little-endian, as GGUF).
template <class T>
void put(Bytes& b, uint64_t at, T v) {
  if (at + sizeof(T) > b.size()) throw std::out_of_range("put past the end of the bytes");
  std::memcpy(b.data() + at, &v, sizeof(T));
}

/// Byte i of the data of the tensor added as number `tensor_index` by add_pattern_tensor.
inline uint8_t pattern_byte(size_t tensor_index, uint64_t i) {
  return static_cast<uint8_t>((i * 31 + tensor_index * 7 + 1) & 0xff);
}

/// Adds a tensor (owned by the writer) whose data is pattern_byte(w.num_tensors(), i), of the
/// byte size `type` and `dims` take.
inline void add_pattern_tensor(GgufWriter& w, const std::string& name, std::vector<uint64_t> dims,
                               GgmlType type) {
  uint64_t n = 1;
  for (auto d : dims) n *= d;
  const uint64_t nbytes = n / ggml_block_size(type) * ggml_type_size(type);
  std::vector<std::byte> data(nbytes);
  for (uint64_t j = 0; j < nbytes; ++j) data[j] = std::byte{pattern_byte(w.num_tensors(), j)};
  w.add_tensor(name, type, std::move(dims), std::move(data));
}

/// w.layout() by name: "version", "tensor_count", "kv_count", "kv:<key>" (pair start),
/// "kv:<key>.type", "kv:<key>.value", "tensor:<name>" (info start), "<name>.n_dims",
/// "<name>.dims", "<name>.type", "<name>.offset", "data:<name>", "end:<name>" (after its last
/// data byte, before padding), "data" (data section), "size" (file size).
inline std::map<std::string, uint64_t> marks(const GgufWriter& w) {
  const GgufLayout l = w.layout();
  std::map<std::string, uint64_t> m;
  m["version"] = GgufLayout::kVersion;
  m["tensor_count"] = GgufLayout::kTensorCount;
  m["kv_count"] = GgufLayout::kKvCount;
  for (const auto& kv : l.kvs) {
    m["kv:" + kv.key] = kv.begin;
    m["kv:" + kv.key + ".type"] = kv.type;
    m["kv:" + kv.key + ".value"] = kv.value;
  }
  for (const auto& t : l.tensors) {
    m["tensor:" + t.name] = t.begin;
    m[t.name + ".n_dims"] = t.n_dims;
    m[t.name + ".dims"] = t.dims;
    m[t.name + ".type"] = t.type;
    m[t.name + ".offset"] = t.offset;
    m["data:" + t.name] = t.data;
    m["end:" + t.name] = t.data + t.nbytes;
  }
  m["data"] = l.data_offset;
  m["size"] = l.file_size;
  return m;
}

/// Replaces the key of the pair starting at `pair_at` by `key`, which must have the same length
/// (a way to write what the writer refuses: a repeated key, a general.alignment of another type).
inline void rename_key(Bytes& b, uint64_t pair_at, const std::string& key) {
  uint64_t len = 0;
  std::memcpy(&len, b.data() + pair_at, sizeof len);
  if (len != key.size()) throw std::invalid_argument("rename_key: length differs");
  std::memcpy(b.data() + pair_at + 8, key.data(), key.size());
}

/// A fresh directory under the system temp dir, removed with its files on destruction.
class TempDir {
 public:
  TempDir() {
    std::string tmpl = (std::filesystem::temp_directory_path() / "plinth_gguf_XXXXXX").string();
    if (mkdtemp(tmpl.data()) == nullptr) throw std::runtime_error("mkdtemp failed");
    path_ = tmpl;
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  std::string write(const std::string& name, const Bytes& b) const {
    const auto p = (path_ / name).string();
    std::ofstream out(p, std::ios::binary | std::ios::trunc);
    out.write(reinterpret_cast<const char*>(b.data()), static_cast<std::streamsize>(b.size()));
    if (!out) throw std::runtime_error("cannot write " + p);
    return p;
  }
  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

}  // namespace plinth::test
