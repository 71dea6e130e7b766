// GgufFile accessors: typed metadata getters and tensor lookup. Parsing is in gguf_parser.cpp.
#include "model/gguf.hpp"

#include <limits>

#include "model/mapped_file.hpp"

namespace plinth {

uint64_t GgufTensor::num_elements() const {
  uint64_t n = 1;
  for (const uint64_t d : dims) n *= d;  // checked against overflow when the file was opened
  return n;
}

GgufFile::~GgufFile() = default;

uint64_t GgufFile::size() const {
  return mapping_->size();
}

bool GgufFile::has(std::string_view key) const {
  return kv_.find(key) != kv_.end();
}

const GgufValue* GgufFile::find_value(std::string_view key) const {
  const auto it = kv_.find(key);
  return it == kv_.end() ? nullptr : &it->second.value;
}

const GgufFile::Entry& GgufFile::entry(std::string_view key) const {
  const auto it = kv_.find(key);
  if (it == kv_.end()) {
    throw GgufError(path_, 0, std::string(key), "metadata key is missing from the file");
  }
  return it->second;
}

void GgufFile::wrong_type(std::string_view key, const Entry& e, const char* wanted) const {
  std::string found = gguf_value_type_name(e.value.type);
  if (e.value.type == GgufValueType::kArray) {
    found += std::string(" of ") + gguf_value_type_name(e.value.elem_type);
  }
  throw GgufError(path_, e.offset, std::string(key),
                  std::string("expected ") + wanted + ", found " + found);
}

uint64_t GgufFile::offset_of(std::string_view key) const {
  return entry(key).offset;
}

GgufValueType GgufFile::type_of(std::string_view key) const {
  return entry(key).value.type;
}

namespace {

// An integer value as uint64 (nullopt for a negative signed value or a non-integer).
std::optional<uint64_t> as_uint(const GgufValue& v) {
  if (gguf_is_unsigned(v.type)) return std::get<uint64_t>(v.data);
  if (gguf_is_signed(v.type) && std::get<int64_t>(v.data) >= 0) {
    return static_cast<uint64_t>(std::get<int64_t>(v.data));
  }
  return std::nullopt;
}

std::optional<int64_t> as_int(const GgufValue& v) {
  if (gguf_is_signed(v.type)) return std::get<int64_t>(v.data);
  if (gguf_is_unsigned(v.type) &&
      std::get<uint64_t>(v.data) <= static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) {
    return static_cast<int64_t>(std::get<uint64_t>(v.data));
  }
  return std::nullopt;
}

bool is_float(GgufValueType t) {
  return t == GgufValueType::kFloat32 || t == GgufValueType::kFloat64;
}

}  // namespace

std::string GgufFile::get_string(std::string_view key) const {
  const Entry& e = entry(key);
  if (e.value.type != GgufValueType::kString) wrong_type(key, e, "string");
  return std::get<std::string>(e.value.data);
}

uint64_t GgufFile::get_uint(std::string_view key) const {
  const Entry& e = entry(key);
  const auto u = as_uint(e.value);
  if (!u) wrong_type(key, e, "a non-negative integer");
  return *u;
}

int64_t GgufFile::get_int(std::string_view key) const {
  const Entry& e = entry(key);
  const auto i = as_int(e.value);
  if (!i) wrong_type(key, e, "an integer that fits int64");
  return *i;
}

double GgufFile::get_float(std::string_view key) const {
  const Entry& e = entry(key);
  if (!is_float(e.value.type)) wrong_type(key, e, "float32 or float64");
  return std::get<double>(e.value.data);
}

bool GgufFile::get_bool(std::string_view key) const {
  const Entry& e = entry(key);
  if (e.value.type != GgufValueType::kBool) wrong_type(key, e, "bool");
  return std::get<bool>(e.value.data);
}

std::vector<std::string> GgufFile::get_string_array(std::string_view key) const {
  const Entry& e = entry(key);
  if (e.value.type != GgufValueType::kArray || e.value.elem_type != GgufValueType::kString) {
    wrong_type(key, e, "array of string");
  }
  std::vector<std::string> out;
  out.reserve(e.value.items().size());
  for (const GgufValue& v : e.value.items()) out.push_back(std::get<std::string>(v.data));
  return out;
}

std::vector<int64_t> GgufFile::get_int_array(std::string_view key) const {
  const Entry& e = entry(key);
  if (e.value.type != GgufValueType::kArray ||
      !(gguf_is_signed(e.value.elem_type) || gguf_is_unsigned(e.value.elem_type))) {
    wrong_type(key, e, "array of integers");
  }
  std::vector<int64_t> out;
  out.reserve(e.value.items().size());
  for (const GgufValue& v : e.value.items()) {
    const auto i = as_int(v);
    if (!i) {
      throw GgufError(path_, e.offset, std::string(key),
                      "element " + std::to_string(out.size()) + " does not fit int64");
    }
    out.push_back(*i);
  }
  return out;
}

std::vector<double> GgufFile::get_float_array(std::string_view key) const {
  const Entry& e = entry(key);
  if (e.value.type != GgufValueType::kArray || !is_float(e.value.elem_type)) {
    wrong_type(key, e, "array of float32 or float64");
  }
  std::vector<double> out;
  out.reserve(e.value.items().size());
  for (const GgufValue& v : e.value.items()) out.push_back(std::get<double>(v.data));
  return out;
}

uint64_t GgufFile::array_size(std::string_view key) const {
  const Entry& e = entry(key);
  if (e.value.type != GgufValueType::kArray) wrong_type(key, e, "array");
  return e.value.items().size();
}

std::optional<std::string> GgufFile::find_string(std::string_view key) const {
  if (!has(key)) return std::nullopt;
  return get_string(key);
}

std::optional<uint64_t> GgufFile::find_uint(std::string_view key) const {
  if (!has(key)) return std::nullopt;
  return get_uint(key);
}

std::optional<double> GgufFile::find_float(std::string_view key) const {
  if (!has(key)) return std::nullopt;
  return get_float(key);
}

std::optional<bool> GgufFile::find_bool(std::string_view key) const {
  if (!has(key)) return std::nullopt;
  return get_bool(key);
}

const GgufTensor* GgufFile::find_tensor(std::string_view name) const {
  const auto it = tensor_index_.find(name);
  return it == tensor_index_.end() ? nullptr : &tensors_[it->second];
}

}  // namespace plinth
