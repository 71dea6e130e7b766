// Parses the GGUF header, metadata and tensor table out of the mapping into a GgufFile.
// Layout (ggml docs/gguf.md): magic "GGUF", uint32 version, uint64 tensor_count, uint64
// metadata_kv_count, the key-value pairs, the tensor infos, padding to general.alignment, data.
#include <cstdio>
#include <limits>
#include <string>

#include "model/gguf.hpp"
#include "model/gguf_cursor.hpp"
#include "model/mapped_file.hpp"

namespace plinth {
namespace {

constexpr uint32_t kMagic = 0x46554747;  // "GGUF" read as a little-endian uint32
constexpr uint64_t kDefaultAlignment = 32;
constexpr int kMaxArrayDepth = 8;  // nesting bound, so a crafted file cannot exhaust the stack
constexpr uint32_t kMaxDims = 4;   // GGML_MAX_DIMS
// Smallest encodings, to reject counts the remaining bytes cannot hold before allocating:
// key-value = key length (8) + 1 key byte + value type (4) + a 1-byte value;
// tensor info = name length (8) + 1 name byte + n_dims (4) + one dim (8) + type (4) + offset (8).
constexpr uint64_t kMinKvBytes = 8 + 1 + 4 + 1;
constexpr uint64_t kMinTensorInfoBytes = 8 + 1 + 4 + 8 + 4 + 8;

// Bytes the smallest element of an array of `type` takes in the file.
uint64_t min_encoded_size(GgufValueType type) {
  switch (type) {
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
    case GgufValueType::kString:
      return 8;  // length prefix
    case GgufValueType::kArray:
      return 4 + 8;  // element type + count
  }
  return 1;
}

}  // namespace

class GgufParser {
 public:
  GgufParser(GgufFile& file, GgufCursor& cur) : f_(file), c_(cur) {}

  void parse() {
    const auto [n_tensors, n_kv] = parse_header();
    parse_metadata(n_kv);
    read_alignment();
    parse_tensor_infos(n_tensors);
    place_tensors();
  }

 private:
  std::pair<uint64_t, uint64_t> parse_header() {
    const auto magic = c_.read<uint32_t>("magic");
    if (magic != kMagic) {
      char hex[16];
      std::snprintf(hex, sizeof hex, "0x%08x", magic);
      c_.fail(0, "magic",
              std::string("bad magic ") + hex + " (expected \"GGUF\"); not a GGUF file");
    }
    const auto version = c_.read<uint32_t>("version");
    if (version != 2 && version != 3) {
      std::string what = "unsupported GGUF version " + std::to_string(version);
      if ((version & 0xffff) == 0 && (version >> 24) <= 3) {
        what += " (a big-endian GGUF file; convert it to little-endian)";
      } else if (version == 1) {
        what += " (GGUF v1 used 32-bit counts; re-convert the model with a current llama.cpp)";
      }
      c_.fail(4, "version", what + "; supported: 2, 3");
    }
    f_.version_ = version;
    const auto n_tensors = c_.read<uint64_t>("tensor_count");
    const auto n_kv = c_.read<uint64_t>("metadata_kv_count");
    // The kv pairs and the tensor infos both follow; each needs a minimum number of bytes.
    if (n_kv > c_.remaining() / kMinKvBytes) {
      c_.fail(16, "metadata_kv_count",
              "count " + std::to_string(n_kv) + " cannot fit in the " +
                  std::to_string(c_.remaining()) + " bytes left");
    }
    if (n_tensors > c_.remaining() / kMinTensorInfoBytes) {
      c_.fail(8, "tensor_count",
              "count " + std::to_string(n_tensors) + " cannot fit in the " +
                  std::to_string(c_.remaining()) + " bytes left");
    }
    return {n_tensors, n_kv};
  }

  GgufValueType read_value_type(const std::string& field) {
    const uint64_t at = c_.pos();
    const auto raw = c_.read<uint32_t>(field);
    if (raw > static_cast<uint32_t>(GgufValueType::kFloat64)) {
      c_.fail(at, field,
              "unknown value type " + std::to_string(raw) + " (the GGUF spec defines 0..12)");
    }
    return static_cast<GgufValueType>(raw);
  }

  GgufValue parse_value(GgufValueType type, const std::string& field, int depth) {
    GgufValue v;
    v.type = type;
    const uint64_t at = c_.pos();
    switch (type) {
      case GgufValueType::kUint8:
        v.data = uint64_t{c_.read<uint8_t>(field)};
        break;
      case GgufValueType::kUint16:
        v.data = uint64_t{c_.read<uint16_t>(field)};
        break;
      case GgufValueType::kUint32:
        v.data = uint64_t{c_.read<uint32_t>(field)};
        break;
      case GgufValueType::kUint64:
        v.data = c_.read<uint64_t>(field);
        break;
      case GgufValueType::kInt8:
        v.data = int64_t{c_.read<int8_t>(field)};
        break;
      case GgufValueType::kInt16:
        v.data = int64_t{c_.read<int16_t>(field)};
        break;
      case GgufValueType::kInt32:
        v.data = int64_t{c_.read<int32_t>(field)};
        break;
      case GgufValueType::kInt64:
        v.data = c_.read<int64_t>(field);
        break;
      case GgufValueType::kFloat32:
        v.data = double{c_.read<float>(field)};
        break;
      case GgufValueType::kFloat64:
        v.data = c_.read<double>(field);
        break;
      case GgufValueType::kBool: {
        const auto b = c_.read<uint8_t>(field);
        if (b > 1) c_.fail(at, field, "bool value " + std::to_string(b) + " is neither 0 nor 1");
        v.data = b == 1;
        break;
      }
      case GgufValueType::kString:
        v.data = c_.read_string(field);
        break;
      case GgufValueType::kArray:
        parse_array(v, field, depth);
        break;
    }
    return v;
  }

  void parse_array(GgufValue& v, const std::string& field, int depth) {
    const uint64_t at = c_.pos();
    if (depth >= kMaxArrayDepth) {
      c_.fail(at, field, "arrays nested deeper than " + std::to_string(kMaxArrayDepth));
    }
    v.elem_type = read_value_type(field + ".element_type");
    const uint64_t count_at = c_.pos();
    const auto count = c_.read<uint64_t>(field + ".count");
    const uint64_t min_size = min_encoded_size(v.elem_type);
    if (count > c_.remaining() / min_size) {
      c_.fail(count_at, field + ".count",
              "array count " + std::to_string(count) + " of " + gguf_value_type_name(v.elem_type) +
                  " points past the end of the file (" + std::to_string(c_.remaining()) +
                  " bytes left)");
    }
    std::vector<GgufValue> items;
    items.reserve(count);
    for (uint64_t i = 0; i < count; ++i) {
      // Elements are parsed under the array's field name, which is only refined to "key[i]" (or
      // "key[i][j].count" for nested arrays) when one is malformed.
      try {
        items.push_back(parse_value(v.elem_type, field, depth + 1));
      } catch (const GgufError& e) {
        if (!e.field().starts_with(field)) throw;
        throw GgufError(c_.path(), e.offset(),
                        field + "[" + std::to_string(i) + "]" + e.field().substr(field.size()),
                        e.detail());
      }
    }
    v.data = std::move(items);
  }

  void parse_metadata(uint64_t n_kv) {
    for (uint64_t i = 0; i < n_kv; ++i) {
      const uint64_t at = c_.pos();
      const std::string key_field = "metadata[" + std::to_string(i) + "].key";
      std::string key = c_.read_string(key_field);
      if (key.empty()) c_.fail(at, key_field, "empty key");
      if (f_.kv_.count(key) != 0) {
        c_.fail(at, key,
                "duplicate metadata key '" + key + "' (first at offset " +
                    std::to_string(f_.kv_.find(key)->second.offset) + ")");
      }
      const GgufValueType type = read_value_type(key + ".type");
      GgufValue value = parse_value(type, key, 0);
      f_.key_order_.push_back(key);
      f_.kv_.emplace(std::move(key), GgufFile::Entry{std::move(value), at});
    }
  }

  void read_alignment() {
    const auto it = f_.kv_.find("general.alignment");
    if (it == f_.kv_.end()) {
      f_.alignment_ = kDefaultAlignment;
      return;
    }
    const GgufValue& v = it->second.value;
    uint64_t a = 0;
    if (gguf_is_unsigned(v.type)) {
      a = std::get<uint64_t>(v.data);
    } else if (gguf_is_signed(v.type) && std::get<int64_t>(v.data) > 0) {
      a = static_cast<uint64_t>(std::get<int64_t>(v.data));
    } else if (!gguf_is_signed(v.type)) {
      c_.fail(it->second.offset, "general.alignment",
              std::string("must be an integer (uint32 per the spec), found ") +
                  gguf_value_type_name(v.type));
    }
    if (a == 0 || (a & (a - 1)) != 0 || a > (uint64_t{1} << 30)) {
      c_.fail(it->second.offset, "general.alignment",
              "alignment " + std::to_string(a) + " is not a power of two in 1..2^30");
    }
    f_.alignment_ = a;
  }

  void parse_tensor_infos(uint64_t n_tensors) {
    f_.tensors_.reserve(n_tensors);
    offset_field_at_.reserve(n_tensors);
    for (uint64_t i = 0; i < n_tensors; ++i) {
      const uint64_t at = c_.pos();
      GgufTensor t;
      const std::string name_field = "tensor[" + std::to_string(i) + "].name";
      t.name = c_.read_string(name_field);
      if (t.name.empty()) c_.fail(at, name_field, "empty tensor name");
      if (const auto it = f_.tensor_index_.find(t.name); it != f_.tensor_index_.end()) {
        c_.fail(at, name_field, "duplicate tensor name '" + t.name + "'");
      }
      const std::string& n = t.name;
      const uint64_t n_dims_at = c_.pos();
      const auto n_dims = c_.read<uint32_t>(n + ".n_dims");
      if (n_dims == 0 || n_dims > kMaxDims) {
        c_.fail(n_dims_at, n + ".n_dims",
                "n_dims " + std::to_string(n_dims) + " outside 1.." + std::to_string(kMaxDims));
      }
      uint64_t n_elements = 1;
      for (uint32_t d = 0; d < n_dims; ++d) {
        const uint64_t dim_at = c_.pos();
        const std::string dim_field = n + ".dims[" + std::to_string(d) + "]";
        const auto dim = c_.read<uint64_t>(dim_field);
        if (dim == 0) c_.fail(dim_at, dim_field, "dimension is 0");
        if (__builtin_mul_overflow(n_elements, dim, &n_elements) ||
            n_elements > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) {
          c_.fail(dim_at, dim_field,
                  "element count overflows int64 at dimension " + std::to_string(dim));
        }
        t.dims.push_back(dim);
      }
      const uint64_t type_at = c_.pos();
      const auto raw_type = c_.read<uint32_t>(n + ".type");
      if (!ggml_type_supported(raw_type)) {
        const char* known = ggml_type_name_any(raw_type);
        c_.fail(type_at, n + ".type",
                "tensor type " + std::to_string(raw_type) +
                    (known ? std::string(" (") + known + ")" : std::string(" (unknown to ggml)")) +
                    " is not supported; supported: " + ggml_supported_types());
      }
      t.type = static_cast<GgmlType>(raw_type);
      const uint64_t block = ggml_block_size(t.type);
      if (t.dims[0] % block != 0) {
        c_.fail(n_dims_at + 4, n + ".dims[0]",
                "row length " + std::to_string(t.dims[0]) + " is not a multiple of the " +
                    ggml_type_name(t.type) + " block size " + std::to_string(block));
      }
      if (__builtin_mul_overflow(n_elements / block, uint64_t{ggml_type_size(t.type)}, &t.nbytes)) {
        c_.fail(type_at, n + ".type", "byte size overflows uint64");
      }
      const uint64_t offset_at = c_.pos();
      t.offset = c_.read<uint64_t>(n + ".offset");  // relative for now
      if (t.offset % f_.alignment_ != 0) {
        c_.fail(offset_at, n + ".offset",
                "data offset " + std::to_string(t.offset) + " is not a multiple of the alignment " +
                    std::to_string(f_.alignment_));
      }
      f_.tensor_index_.emplace(t.name, f_.tensors_.size());
      f_.tensors_.push_back(std::move(t));
      offset_field_at_.push_back(offset_at);
    }
  }

  void place_tensors() {
    const uint64_t end_of_infos = c_.pos();
    const uint64_t a = f_.alignment_;
    // end_of_infos <= file size < 2^63, so rounding up cannot overflow.
    f_.data_offset_ = (end_of_infos + a - 1) / a * a;
    const uint64_t size = c_.size();
    for (size_t i = 0; i < f_.tensors_.size(); ++i) {
      GgufTensor& t = f_.tensors_[i];
      uint64_t begin = 0;
      uint64_t end = 0;
      if (__builtin_add_overflow(f_.data_offset_, t.offset, &begin) ||
          __builtin_add_overflow(begin, t.nbytes, &end) || end > size) {
        c_.fail(offset_field_at_[i], t.name + ".offset",
                "tensor data [data start " + std::to_string(f_.data_offset_) + " + " +
                    std::to_string(t.offset) + ", +" + std::to_string(t.nbytes) +
                    " bytes) ends past the end of the file (size " + std::to_string(size) + ")");
      }
      t.offset = begin;
      t.data = f_.mapping_->data() + begin;
    }
  }

  GgufFile& f_;
  GgufCursor& c_;
  std::vector<uint64_t> offset_field_at_;  // where each tensor's offset field is, for messages
};

std::unique_ptr<GgufFile> GgufFile::open(const std::string& path) {
  std::unique_ptr<GgufFile> f(new GgufFile());
  f->path_ = path;
  f->mapping_ = std::make_unique<MappedFile>(path);
  GgufCursor cursor(f->path_, f->mapping_->data(), f->mapping_->size());
  GgufParser(*f, cursor).parse();
  return f;
}

}  // namespace plinth
