// GGUF v3 writer (ggml docs/gguf.md; padding as ggml/src/gguf.cpp writes it).
#include "model/gguf_writer.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <bit>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <limits>
#include <stdexcept>
#include <system_error>

#include "model/output_path.hpp"

namespace plinth {
namespace {

constexpr uint32_t kMagic = 0x46554747;  // "GGUF" as a little-endian uint32
constexpr uint32_t kVersion = 3;
constexpr uint64_t kDefaultAlignment = 32;
constexpr uint64_t kMaxAlignment = uint64_t{1} << 30;  // the reader's bound
constexpr size_t kMaxDims = 4;                         // GGML_MAX_DIMS

static_assert(std::endian::native == std::endian::little, "GGUF is written little-endian");

uint64_t align_up(uint64_t x, uint64_t a) {
  return (x + a - 1) / a * a;
}

// Bytes a value's payload takes (after its uint32 type).
uint64_t encoded_size(const GgufValue& v) {
  switch (v.type) {
    case GgufValueType::kUint8:
    case GgufValueType::kInt8:
    case GgufValueType::kBool:
      return 1;
    case GgufValueType::kUint16:
    case GgufValueType::kInt16:
      return 2;
    case GgufValueType::kUint32:
    case GgufValueType::kInt32:
    case GgufValueType::kFloat32:
      return 4;
    case GgufValueType::kUint64:
    case GgufValueType::kInt64:
    case GgufValueType::kFloat64:
      return 8;
    case GgufValueType::kString:
      return 8 + std::get<std::string>(v.data).size();
    case GgufValueType::kArray: {
      uint64_t n = 4 + 8;
      for (const GgufValue& item : v.items()) n += encoded_size(item);
      return n;
    }
  }
  return 0;
}

// Appends little-endian encodings to a buffer that is flushed to the sink in large chunks.
class Encoder {
 public:
  using Sink = std::function<void(const std::byte*, size_t)>;
  explicit Encoder(const Sink& sink) : sink_(sink) { buf_.reserve(kChunk); }

  template <class T>
  void put(T v) {
    bytes(reinterpret_cast<const std::byte*>(&v), sizeof(T));
  }
  void string(const std::string& s) {
    put<uint64_t>(s.size());
    bytes(reinterpret_cast<const std::byte*>(s.data()), s.size());
  }
  void zeros(uint64_t n) {
    static constexpr std::byte kZeros[64] = {};
    while (n > 0) {
      const size_t k = static_cast<size_t>(std::min<uint64_t>(n, sizeof kZeros));
      bytes(kZeros, k);
      n -= k;
    }
  }
  // Large blocks (tensor data) go to the sink directly, without a copy.
  void bytes(const std::byte* p, size_t n) {
    if (n >= kChunk) {
      flush();
      sink_(p, n);
      written_ += n;
      return;
    }
    if (buf_.size() + n > kChunk) flush();
    buf_.insert(buf_.end(), p, p + n);
    written_ += n;
  }
  void value(const GgufValue& v) {
    switch (v.type) {
      case GgufValueType::kUint8:
        put(static_cast<uint8_t>(std::get<uint64_t>(v.data)));
        break;
      case GgufValueType::kUint16:
        put(static_cast<uint16_t>(std::get<uint64_t>(v.data)));
        break;
      case GgufValueType::kUint32:
        put(static_cast<uint32_t>(std::get<uint64_t>(v.data)));
        break;
      case GgufValueType::kUint64:
        put(std::get<uint64_t>(v.data));
        break;
      case GgufValueType::kInt8:
        put(static_cast<int8_t>(std::get<int64_t>(v.data)));
        break;
      case GgufValueType::kInt16:
        put(static_cast<int16_t>(std::get<int64_t>(v.data)));
        break;
      case GgufValueType::kInt32:
        put(static_cast<int32_t>(std::get<int64_t>(v.data)));
        break;
      case GgufValueType::kInt64:
        put(std::get<int64_t>(v.data));
        break;
      case GgufValueType::kFloat32:
        put(static_cast<float>(std::get<double>(v.data)));
        break;
      case GgufValueType::kFloat64:
        put(std::get<double>(v.data));
        break;
      case GgufValueType::kBool:
        put<uint8_t>(std::get<bool>(v.data) ? 1 : 0);
        break;
      case GgufValueType::kString:
        string(std::get<std::string>(v.data));
        break;
      case GgufValueType::kArray:
        put(static_cast<uint32_t>(v.elem_type));
        put<uint64_t>(v.items().size());
        for (const GgufValue& item : v.items()) value(item);
        break;
    }
  }
  void flush() {
    if (!buf_.empty()) sink_(buf_.data(), buf_.size());
    buf_.clear();
  }
  uint64_t written() const { return written_; }

 private:
  static constexpr size_t kChunk = size_t{1} << 20;
  const Sink& sink_;
  std::vector<std::byte> buf_;
  uint64_t written_ = 0;
};

bool is_valid_type(GgufValueType t) {
  return static_cast<uint32_t>(t) <= static_cast<uint32_t>(GgufValueType::kFloat64);
}

[[noreturn]] void value_error(const std::string& field, const std::string& what) {
  throw std::invalid_argument("GGUF writer: " + field + ": " + what);
}

// An unsigned integer type: held as uint64 and within the type's range.
void check_unsigned(const GgufValue& v, const std::string& field, const char* name) {
  if (!std::holds_alternative<uint64_t>(v.data)) {
    value_error(field, std::string(name) + " not held as uint64");
  }
  const uint64_t x = std::get<uint64_t>(v.data);
  const uint64_t max = v.type == GgufValueType::kUint8    ? 0xff
                       : v.type == GgufValueType::kUint16 ? 0xffff
                       : v.type == GgufValueType::kUint32 ? 0xffffffff
                                                          : std::numeric_limits<uint64_t>::max();
  if (x > max) value_error(field, "value " + std::to_string(x) + " does not fit " + name);
}

// A signed integer type: held as int64 and within the type's range.
void check_signed(const GgufValue& v, const std::string& field, const char* name) {
  if (!std::holds_alternative<int64_t>(v.data)) {
    value_error(field, std::string(name) + " not held as int64");
  }
  const int64_t x = std::get<int64_t>(v.data);
  const int bits = v.type == GgufValueType::kInt8    ? 8
                   : v.type == GgufValueType::kInt16 ? 16
                   : v.type == GgufValueType::kInt32 ? 32
                                                     : 64;
  if (bits < 64 && (x < -(int64_t{1} << (bits - 1)) || x >= (int64_t{1} << (bits - 1)))) {
    value_error(field, "value " + std::to_string(x) + " does not fit " + name);
  }
}

void check_value(const GgufValue& v, const std::string& field);

// An array: held as a vector of values, of a valid element type, each element of that type.
void check_array(const GgufValue& v, const std::string& field) {
  if (!std::holds_alternative<std::vector<GgufValue>>(v.data)) {
    value_error(field, "array not held as a vector of values");
  }
  if (!is_valid_type(v.elem_type)) {
    value_error(field,
                "unknown element type " + std::to_string(static_cast<uint32_t>(v.elem_type)));
  }
  const auto& items = v.items();
  for (size_t i = 0; i < items.size(); ++i) {
    const std::string f = field + "[" + std::to_string(i) + "]";
    if (items[i].type != v.elem_type) {
      throw std::invalid_argument("GGUF writer: " + f + ": element of type " +
                                  gguf_value_type_name(items[i].type) + " in an array of " +
                                  gguf_value_type_name(v.elem_type));
    }
    check_value(items[i], f);
  }
}

// Throws std::invalid_argument naming `field` when `v`'s data does not match its type.
void check_value(const GgufValue& v, const std::string& field) {
  if (!is_valid_type(v.type)) {
    value_error(field, "unknown value type " + std::to_string(static_cast<uint32_t>(v.type)));
  }
  const char* name = gguf_value_type_name(v.type);
  if (gguf_is_unsigned(v.type)) {
    check_unsigned(v, field, name);
  } else if (gguf_is_signed(v.type)) {
    check_signed(v, field, name);
  } else if (v.type == GgufValueType::kFloat32 || v.type == GgufValueType::kFloat64) {
    if (!std::holds_alternative<double>(v.data)) {
      value_error(field, std::string(name) + " not held as double");
    }
  } else if (v.type == GgufValueType::kBool) {
    if (!std::holds_alternative<bool>(v.data)) value_error(field, "bool not held as bool");
  } else if (v.type == GgufValueType::kString) {
    if (!std::holds_alternative<std::string>(v.data)) {
      value_error(field, "string not held as std::string");
    }
  } else {  // ARRAY
    check_array(v, field);
  }
}

[[noreturn]] void io_error(const std::string& what, const std::string& path, int err) {
  throw std::runtime_error(what + " " + path + ": " + std::generic_category().message(err));
}

}  // namespace

GgufValue gguf_uint(GgufValueType type, uint64_t v) {
  if (!gguf_is_unsigned(type)) {
    throw std::invalid_argument(std::string("gguf_uint: ") + gguf_value_type_name(type) +
                                " is not an unsigned integer type");
  }
  GgufValue value{type, GgufValueType::kUint8, v};
  check_value(value, "gguf_uint");
  return value;
}

GgufValue gguf_int(GgufValueType type, int64_t v) {
  if (!gguf_is_signed(type)) {
    throw std::invalid_argument(std::string("gguf_int: ") + gguf_value_type_name(type) +
                                " is not a signed integer type");
  }
  GgufValue value{type, GgufValueType::kUint8, v};
  check_value(value, "gguf_int");
  return value;
}

GgufValue gguf_float(GgufValueType type, double v) {
  if (type != GgufValueType::kFloat32 && type != GgufValueType::kFloat64) {
    throw std::invalid_argument(std::string("gguf_float: ") + gguf_value_type_name(type) +
                                " is not float32 or float64");
  }
  if (type == GgufValueType::kFloat32) v = static_cast<float>(v);
  return GgufValue{type, GgufValueType::kUint8, v};
}

GgufValue gguf_bool(bool v) {
  return GgufValue{GgufValueType::kBool, GgufValueType::kUint8, v};
}

GgufValue gguf_string(std::string v) {
  return GgufValue{GgufValueType::kString, GgufValueType::kUint8, std::move(v)};
}

GgufValue gguf_array(GgufValueType elem_type, std::vector<GgufValue> items) {
  GgufValue value{GgufValueType::kArray, elem_type, std::move(items)};
  check_value(value, "gguf_array");
  return value;
}

GgufValue gguf_string_array(const std::vector<std::string>& items) {
  std::vector<GgufValue> values;
  values.reserve(items.size());
  for (const std::string& s : items) values.push_back(gguf_string(s));
  return GgufValue{GgufValueType::kArray, GgufValueType::kString, std::move(values)};
}

void GgufWriter::check_kv(const std::string& key, const GgufValue& value) const {
  if (key.empty()) throw std::invalid_argument("GGUF writer: empty metadata key");
  check_value(value, key);
}

void GgufWriter::apply_alignment(const std::string& key, const GgufValue& value) {
  if (key != "general.alignment") return;
  uint64_t a = 0;
  if (gguf_is_unsigned(value.type)) {
    a = std::get<uint64_t>(value.data);
  } else if (gguf_is_signed(value.type) && std::get<int64_t>(value.data) > 0) {
    a = static_cast<uint64_t>(std::get<int64_t>(value.data));
  } else if (!gguf_is_signed(value.type)) {
    throw std::invalid_argument(std::string("GGUF writer: general.alignment must be an integer "
                                            "(uint32 per the spec), not ") +
                                gguf_value_type_name(value.type));
  }
  if (a == 0 || (a & (a - 1)) != 0 || a > kMaxAlignment) {
    throw std::invalid_argument("GGUF writer: general.alignment " + std::to_string(a) +
                                " is not a power of two in 1..2^30");
  }
  alignment_ = a;
}

void GgufWriter::add(const std::string& key, GgufValue value) {
  check_kv(key, value);
  if (has(key)) throw std::invalid_argument("GGUF writer: duplicate metadata key '" + key + "'");
  apply_alignment(key, value);
  kvs_.push_back({key, std::move(value)});
}

void GgufWriter::set(const std::string& key, GgufValue value) {
  check_kv(key, value);
  for (Kv& kv : kvs_) {
    if (kv.key == key) {
      apply_alignment(key, value);
      kv.value = std::move(value);
      return;
    }
  }
  add(key, std::move(value));
}

bool GgufWriter::has(const std::string& key) const {
  return std::any_of(kvs_.begin(), kvs_.end(), [&](const Kv& kv) { return kv.key == key; });
}

void GgufWriter::add_u32(const std::string& key, uint32_t v) {
  add(key, gguf_uint(GgufValueType::kUint32, v));
}
void GgufWriter::add_f32(const std::string& key, float v) {
  add(key, gguf_float(GgufValueType::kFloat32, v));
}
void GgufWriter::add_string(const std::string& key, const std::string& v) {
  add(key, gguf_string(v));
}
void GgufWriter::add_bool(const std::string& key, bool v) {
  add(key, gguf_bool(v));
}

void GgufWriter::add_tensor(const std::string& name, GgmlType type, std::vector<uint64_t> dims,
                            std::span<const std::byte> data) {
  auto fail = [&](const std::string& what) {
    throw std::invalid_argument("GGUF writer: tensor '" + name + "': " + what);
  };
  if (name.empty()) throw std::invalid_argument("GGUF writer: empty tensor name");
  if (std::any_of(tensors_.begin(), tensors_.end(),
                  [&](const Tensor& t) { return t.name == name; }))
    fail("duplicate tensor name");
  if (!ggml_type_supported(static_cast<uint32_t>(type))) {
    fail("tensor type " + std::to_string(static_cast<uint32_t>(type)) +
         " is not supported; supported: " + ggml_supported_types());
  }
  if (dims.empty() || dims.size() > kMaxDims) {
    fail(std::to_string(dims.size()) + " dims, outside 1..4");
  }
  uint64_t n = 1;
  for (uint64_t d : dims) {
    if (d == 0) fail("a dimension is 0");
    if (__builtin_mul_overflow(n, d, &n) ||
        n > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) {
      fail("element count overflows int64");
    }
  }
  const uint64_t block = ggml_block_size(type);
  if (dims[0] % block != 0) {
    fail("row length " + std::to_string(dims[0]) + " is not a multiple of the " +
         ggml_type_name(type) + " block size " + std::to_string(block));
  }
  uint64_t nbytes = 0;
  if (__builtin_mul_overflow(n / block, uint64_t{ggml_type_size(type)}, &nbytes)) {
    fail("byte size overflows uint64");
  }
  if (data.size() != nbytes) {
    fail(std::to_string(data.size()) + " data bytes, expected " + std::to_string(nbytes) + " for " +
         ggml_type_name(type) + " with " + std::to_string(n) + " elements");
  }
  tensors_.push_back({name, type, std::move(dims), data, nullptr});
}

void GgufWriter::add_tensor(const std::string& name, GgmlType type, std::vector<uint64_t> dims,
                            std::vector<std::byte> data) {
  auto owned = std::make_shared<const std::vector<std::byte>>(std::move(data));
  add_tensor(name, type, std::move(dims), std::span<const std::byte>(*owned));
  tensors_.back().owned = std::move(owned);
}

GgufLayout GgufWriter::layout() const {
  GgufLayout l;
  uint64_t pos = 4 + 4 + 8 + 8;  // magic, version, tensor_count, kv_count
  l.kvs.reserve(kvs_.size());
  for (const Kv& kv : kvs_) {
    GgufLayout::Kv k;
    k.key = kv.key;
    k.begin = pos;
    k.type = pos + 8 + kv.key.size();
    k.value = k.type + 4;
    pos = k.value + encoded_size(kv.value);
    l.kvs.push_back(std::move(k));
  }
  uint64_t rel = 0;
  l.tensors.reserve(tensors_.size());
  for (const Tensor& t : tensors_) {
    GgufLayout::TensorInfo i;
    i.name = t.name;
    i.begin = pos;
    i.n_dims = pos + 8 + t.name.size();
    i.dims = i.n_dims + 4;
    i.type = i.dims + 8 * t.dims.size();
    i.offset = i.type + 4;
    i.relative = rel;
    i.nbytes = t.data.size();
    pos = i.offset + 8;
    rel = align_up(rel + i.nbytes, alignment_);
    l.tensors.push_back(std::move(i));
  }
  l.data_offset = align_up(pos, alignment_);
  for (GgufLayout::TensorInfo& i : l.tensors) i.data = l.data_offset + i.relative;
  l.file_size = l.data_offset + rel;
  return l;
}

void GgufWriter::write(const std::function<void(const std::byte*, size_t)>& sink) const {
  const GgufLayout l = layout();
  Encoder e(sink);
  e.put(kMagic);
  e.put(kVersion);
  e.put<uint64_t>(tensors_.size());
  e.put<uint64_t>(kvs_.size());
  for (const Kv& kv : kvs_) {
    e.string(kv.key);
    e.put(static_cast<uint32_t>(kv.value.type));
    e.value(kv.value);
  }
  for (size_t i = 0; i < tensors_.size(); ++i) {
    const Tensor& t = tensors_[i];
    e.string(t.name);
    e.put(static_cast<uint32_t>(t.dims.size()));
    for (uint64_t d : t.dims) e.put(d);
    e.put(static_cast<uint32_t>(t.type));
    e.put(l.tensors[i].relative);
  }
  e.zeros(l.data_offset - e.written());
  for (const Tensor& t : tensors_) {
    e.bytes(t.data.data(), t.data.size());
    e.zeros(align_up(t.data.size(), alignment_) - t.data.size());
  }
  e.flush();
  if (e.written() != l.file_size) {
    throw std::logic_error("GGUF writer: wrote " + std::to_string(e.written()) +
                           " bytes, layout says " + std::to_string(l.file_size));
  }
}

std::vector<uint8_t> GgufWriter::build() const {
  std::vector<uint8_t> out;
  out.reserve(layout().file_size);
  write([&](const std::byte* p, size_t n) {
    const auto* b = reinterpret_cast<const uint8_t*>(p);
    out.insert(out.end(), b, b + n);
  });
  return out;
}

void GgufWriter::write_file(const std::string& path,
                            const std::function<void(const std::string&)>& check) const {
  // Refused before anything is written, and again just before the rename (the path may have
  // changed meanwhile): a rename must never replace a directory, a device node or a FIFO.
  auto refuse_non_regular = [&path] {
    if (const std::string kind = non_regular_output(path); !kind.empty()) {
      throw std::runtime_error("cannot write " + non_regular_output_message(path, kind));
    }
  };
  refuse_non_regular();
  std::string tmp = path + ".tmp.XXXXXX";
  const int fd = mkstemp(tmp.data());
  if (fd < 0) io_error("cannot create a temporary file next to", path, errno);
  bool fd_open = true;
  bool renamed = false;
  auto cleanup = [&] {
    if (fd_open) ::close(fd);
    if (!renamed) ::unlink(tmp.c_str());
  };
  try {
    if (::fchmod(fd, 0644) != 0) io_error("cannot set the mode of", tmp, errno);
    write([&](const std::byte* p, size_t n) {
      while (n > 0) {
        const ssize_t k = ::write(fd, p, n);
        if (k < 0) {
          if (errno == EINTR) continue;
          io_error("cannot write", tmp, errno);
        }
        p += k;
        n -= static_cast<size_t>(k);
      }
    });
    if (::fsync(fd) != 0) io_error("cannot flush", tmp, errno);
    fd_open = false;  // Linux releases the descriptor even when close fails
    if (::close(fd) != 0) io_error("cannot close", tmp, errno);
  } catch (...) {
    cleanup();
    throw;
  }
  try {
    if (check) check(tmp);
    refuse_non_regular();
    if (std::rename(tmp.c_str(), path.c_str()) != 0) io_error("cannot rename onto", path, errno);
    renamed = true;
  } catch (...) {
    cleanup();
    throw;
  }
}

}  // namespace plinth
