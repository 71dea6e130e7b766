#include "weight_convert.hpp"

#include <cstring>
#include <limits>
#include <stdexcept>

#include "plinth/ggml_format.hpp"

namespace plinth::cuda {
namespace {

std::string tensor_name(const plinth_tensor_view& t) {
  return t.name != nullptr ? std::string(t.name) : std::string("<unnamed>");
}

std::string dims_text(const plinth_tensor_view& t) {
  std::string s = "[";
  const uint32_t n = t.n_dims <= 4 ? t.n_dims : 4;
  for (uint32_t i = 0; i < n; ++i) s += (i ? ", " : "") + std::to_string(t.dims[i]);
  return s + "]";
}

[[noreturn]] void fail(const plinth_tensor_view& t, const std::string& what) {
  throw std::invalid_argument("weight " + tensor_name(t) + " (" + dtype_name(t.dtype) + ", dims " +
                              dims_text(t) + "): " + what);
}

}  // namespace

uint16_t f32_to_bf16(float x) {
  return ggml::f32_to_bf16(x);
}

float bf16_to_f32(uint16_t b) {
  return ggml::bf16_to_f32(b);
}

float f16_to_f32(uint16_t h) {
  return ggml::f16_to_f32(h);
}

std::string dtype_name(int32_t dtype) {
  const ggml::Format* f = ggml::find_format(dtype);
  if (f != nullptr) return f->name;
  return "type id " + std::to_string(dtype) + " (unsupported)";
}

uint64_t tensor_elements(const plinth_tensor_view& t) {
  if (t.n_dims < 1 || t.n_dims > 4) {
    fail(t, "n_dims = " + std::to_string(t.n_dims) + " must be 1..4");
  }
  uint64_t n = 1;
  for (uint32_t i = 0; i < t.n_dims; ++i) {
    if (t.dims[i] == 0) fail(t, "dims[" + std::to_string(i) + "] is 0");
    if (n > std::numeric_limits<uint64_t>::max() / t.dims[i]) fail(t, "element count overflows");
    n *= t.dims[i];
  }
  return n;
}

void check_convertible(const plinth_tensor_view& t) {
  if (t.struct_size < sizeof(plinth_tensor_view)) {
    fail(t, "struct_size = " + std::to_string(t.struct_size) + " is smaller than " +
                std::to_string(sizeof(plinth_tensor_view)));
  }
  const ggml::Format* g = ggml::find_format(t.dtype);
  if (g == nullptr) {
    fail(t, "backend_cuda converts the types of the format table only (" + ggml::supported_names() +
                "); re-quantize the model to one of them (e.g. llama-quantize ... Q8_0)");
  }
  const uint64_t n = tensor_elements(t);
  if (t.dims[0] % g->block_elems != 0) {
    fail(t, "dims[0] = " + std::to_string(t.dims[0]) + " is not a multiple of the block size " +
                std::to_string(g->block_elems) + " (the file is malformed)");
  }
  const uint64_t blocks = n / g->block_elems;
  if (blocks > std::numeric_limits<uint64_t>::max() / g->block_bytes) {
    fail(t, "byte size overflows");
  }
  const uint64_t want = blocks * g->block_bytes;
  if (t.nbytes != want) {
    fail(t, "nbytes = " + std::to_string(t.nbytes) + " but " + std::to_string(n) +
                " elements need " + std::to_string(want) + " bytes (" + std::to_string(blocks) +
                " blocks of " + std::to_string(g->block_bytes) + " bytes; the file is malformed)");
  }
  if (t.data == nullptr) fail(t, "data is NULL");
}

void to_bf16_into(const plinth_tensor_view& t, uint16_t* out, uint64_t out_elements) {
  check_convertible(t);
  const uint64_t n = tensor_elements(t);
  if (out == nullptr || out_elements != n) {
    fail(t, "the output buffer holds " + std::to_string(out == nullptr ? 0 : out_elements) +
                " elements but the tensor has " + std::to_string(n));
  }
  const auto* src = static_cast<const uint8_t*>(t.data);
  const ggml::Format& f = ggml::format(t.dtype);
  if (t.dtype == ggml::kBF16) {  // copied as is
    for (uint64_t i = 0; i < n; ++i) {
      out[i] = static_cast<uint16_t>(src[2 * i] | (src[2 * i + 1] << 8));
    }
    return;
  }
  // The SDK's one decoder (gguf-py's f32 values), a bounded chunk of blocks at a time, then each
  // value rounded to bf16.
  constexpr uint64_t kChunk = 4096;  // elements per step (a multiple of every block size)
  float buf[kChunk];
  for (uint64_t e = 0; e < n; e += kChunk) {
    const uint64_t count = n - e < kChunk ? n - e : kChunk;
    ggml::decode_blocks(f, src + e / f.block_elems * f.block_bytes, count / f.block_elems, buf);
    for (uint64_t i = 0; i < count; ++i) out[e + i] = f32_to_bf16(buf[i]);
  }
}

std::vector<uint16_t> to_bf16(const plinth_tensor_view& t) {
  check_convertible(t);
  std::vector<uint16_t> out(tensor_elements(t));
  to_bf16_into(t, out.data(), out.size());
  return out;
}

}  // namespace plinth::cuda
