// A small GGUF writer for tests: builds valid files byte by byte and records where each field
// lands (marks), so malformed variants can be made by patching a known offset.
#pragma once

#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include "model/ggml_type.hpp"
#include "model/gguf_value.hpp"

namespace plinth::test {

using Bytes = std::vector<uint8_t>;

template <class T>
void append(Bytes& b, T v) {
  const auto* p = reinterpret_cast<const uint8_t*>(&v);
  b.insert(b.end(), p, p + sizeof(T));
}
inline void append_string(Bytes& b, const std::string& s) {
  append<uint64_t>(b, s.size());
  b.insert(b.end(), s.begin(), s.end());
}
template <class T>
void put(Bytes& b, uint64_t at, T v) {
  std::memcpy(b.data() + at, &v, sizeof(T));
}

/// Encoded value payloads (after the value type), for GgufWriter::add.
template <class T>
Bytes enc(T v) {
  Bytes b;
  append(b, v);
  return b;
}
inline Bytes enc_string(const std::string& s) {
  Bytes b;
  append_string(b, s);
  return b;
}
/// An array payload: element type, count, then the already encoded elements.
inline Bytes enc_array(GgufValueType elem, uint64_t count, const Bytes& elems) {
  Bytes b;
  append(b, static_cast<uint32_t>(elem));
  append(b, count);
  b.insert(b.end(), elems.begin(), elems.end());
  return b;
}
template <class T>
Bytes enc_array_of(GgufValueType elem, const std::vector<T>& v) {
  Bytes elems;
  for (const T& x : v) append(elems, x);
  return enc_array(elem, v.size(), elems);
}
inline Bytes enc_string_array(const std::vector<std::string>& v) {
  Bytes elems;
  for (const auto& s : v) append_string(elems, s);
  return enc_array(GgufValueType::STRING, v.size(), elems);
}

class GgufWriter {
 public:
  uint32_t version = 3;
  uint64_t alignment = 32;  // padding used; write general.alignment yourself when not 32

  void add(const std::string& key, GgufValueType type, Bytes payload) {
    kvs_.push_back({key, static_cast<uint32_t>(type), std::move(payload)});
  }
  void add_u32(const std::string& key, uint32_t v) { add(key, GgufValueType::UINT32, enc(v)); }
  void add_f32(const std::string& key, float v) { add(key, GgufValueType::FLOAT32, enc(v)); }
  void add_string(const std::string& key, const std::string& v) {
    add(key, GgufValueType::STRING, enc_string(v));
  }
  void add_bool(const std::string& key, bool v) {
    add(key, GgufValueType::BOOL, enc<uint8_t>(v ? 1 : 0));
  }

  /// A tensor whose data is a deterministic byte pattern (see pattern_byte) of the right size.
  void add_tensor(const std::string& name, std::vector<uint64_t> dims, GgmlType type) {
    uint64_t n = 1;
    for (auto d : dims) n *= d;
    const uint64_t nbytes = n / ggml_block_size(type) * ggml_type_size(type);
    tensors_.push_back({name, std::move(dims), static_cast<uint32_t>(type), nbytes});
  }
  static uint8_t pattern_byte(size_t tensor_index, uint64_t i) {
    return static_cast<uint8_t>((i * 31 + tensor_index * 7 + 1) & 0xff);
  }

  /// The file. marks: "version", "tensor_count", "kv_count", "kv:<key>" (pair start),
  /// "kv:<key>.type", "kv:<key>.value", "tensor:<name>" (info start), "<name>.n_dims",
  /// "<name>.dims", "<name>.type", "<name>.offset", "data:<name>", "data". A repeated key or
  /// name gets "#2" appended.
  Bytes build() {
    marks.clear();
    Bytes b;
    append<uint32_t>(b, 0x46554747);
    mark("version", b);
    append(b, version);
    mark("tensor_count", b);
    append<uint64_t>(b, tensors_.size());
    mark("kv_count", b);
    append<uint64_t>(b, kvs_.size());
    for (const auto& kv : kvs_) {
      const std::string m = mark("kv:" + kv.key, b);
      append_string(b, kv.key);
      mark(m + ".type", b);
      append(b, kv.type);
      mark(m + ".value", b);
      b.insert(b.end(), kv.payload.begin(), kv.payload.end());
    }
    uint64_t rel = 0;
    std::vector<uint64_t> rels;
    for (const auto& t : tensors_) {
      const std::string m = mark("tensor:" + t.name, b).substr(7);
      append_string(b, t.name);
      mark(m + ".n_dims", b);
      append<uint32_t>(b, static_cast<uint32_t>(t.dims.size()));
      mark(m + ".dims", b);
      for (auto d : t.dims) append(b, d);
      mark(m + ".type", b);
      append(b, t.type);
      mark(m + ".offset", b);
      append(b, rel);
      rels.push_back(rel);
      rel = (rel + t.nbytes + alignment - 1) / alignment * alignment;
    }
    if (!tensors_.empty()) {
      b.resize((b.size() + alignment - 1) / alignment * alignment, 0);
      const uint64_t data = b.size();
      marks["data"] = data;
      for (size_t i = 0; i < tensors_.size(); ++i) {
        b.resize(data + rels[i], 0);
        marks["data:" + tensors_[i].name] = b.size();
        for (uint64_t j = 0; j < tensors_[i].nbytes; ++j) b.push_back(pattern_byte(i, j));
      }
    }
    return b;
  }

  std::map<std::string, uint64_t> marks;

 private:
  struct Kv {
    std::string key;
    uint32_t type;
    Bytes payload;
  };
  struct Tensor {
    std::string name;
    std::vector<uint64_t> dims;
    uint32_t type;
    uint64_t nbytes;
  };
  std::string mark(std::string name, const Bytes& b) {
    if (marks.count(name) != 0) name += "#2";
    marks[name] = b.size();
    return name;
  }
  std::vector<Kv> kvs_;
  std::vector<Tensor> tensors_;
};

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
  std::string write(const std::string& name, const Bytes& b) const {
    const auto p = (path_ / name).string();
    std::ofstream out(p, std::ios::binary | std::ios::trunc);
    out.write(reinterpret_cast<const char*>(b.data()), static_cast<std::streamsize>(b.size()));
    return p;
  }
  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

}  // namespace plinth::test
