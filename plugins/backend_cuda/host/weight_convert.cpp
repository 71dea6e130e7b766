#include "weight_convert.hpp"

#include <cstring>
#include <limits>
#include <stdexcept>

namespace plinth::cuda {
namespace {

constexpr uint64_t kBlock = 32;  // elements per Q8_0 / Q4_0 / Q4_1 block (ggml QK8_0, QK4_0, QK4_1)

struct Geometry {
  uint64_t block_elems;
  uint64_t block_bytes;
};

// ggml type traits (ggml.c type_traits: blck_size, type_size); {0, 0} = unsupported.
Geometry geometry(int32_t dtype) {
  switch (dtype) {
    case PLINTH_DTYPE_F32:
      return {1, 4};
    case PLINTH_DTYPE_F16:
    case PLINTH_DTYPE_BF16:
      return {1, 2};
    case PLINTH_DTYPE_Q8_0:
      return {kBlock, 2 + kBlock};
    case PLINTH_DTYPE_Q4_0:
      return {kBlock, 2 + kBlock / 2};
    case PLINTH_DTYPE_Q4_1:
      return {kBlock, 4 + kBlock / 2};
    default:
      return {0, 0};
  }
}

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

uint16_t load_u16(const uint8_t* p) {
  return static_cast<uint16_t>(p[0] | (static_cast<uint16_t>(p[1]) << 8));  // GGUF: little-endian
}

void convert_q8_0(const uint8_t* src, uint64_t nblocks, uint16_t* out) {
  for (uint64_t b = 0; b < nblocks; ++b, src += 2 + kBlock, out += kBlock) {
    const float d = f16_to_f32(load_u16(src));
    for (uint64_t j = 0; j < kBlock; ++j) {
      const auto q = static_cast<int8_t>(src[2 + j]);
      out[j] = f32_to_bf16(static_cast<float>(q) * d);
    }
  }
}

void convert_q4_0(const uint8_t* src, uint64_t nblocks, uint16_t* out) {
  for (uint64_t b = 0; b < nblocks; ++b, src += 2 + kBlock / 2, out += kBlock) {
    const float d = f16_to_f32(load_u16(src));
    for (uint64_t j = 0; j < kBlock / 2; ++j) {
      const uint8_t q = src[2 + j];
      out[j] = f32_to_bf16(static_cast<float>((q & 0x0f) - 8) * d);
      out[j + kBlock / 2] = f32_to_bf16(static_cast<float>((q >> 4) - 8) * d);
    }
  }
}

void convert_q4_1(const uint8_t* src, uint64_t nblocks, uint16_t* out) {
  for (uint64_t b = 0; b < nblocks; ++b, src += 4 + kBlock / 2, out += kBlock) {
    const float d = f16_to_f32(load_u16(src));
    const float m = f16_to_f32(load_u16(src + 2));
    for (uint64_t j = 0; j < kBlock / 2; ++j) {
      const uint8_t q = src[4 + j];
      // d * q, rounded, then + m, rounded (gguf-py / backend_cpu); built with -ffp-contract=off.
      const float lo = d * static_cast<float>(q & 0x0f);
      const float hi = d * static_cast<float>(q >> 4);
      out[j] = f32_to_bf16(lo + m);
      out[j + kBlock / 2] = f32_to_bf16(hi + m);
    }
  }
}

}  // namespace

uint16_t f32_to_bf16(float x) {
  uint32_t bits;
  std::memcpy(&bits, &x, sizeof bits);
  if ((bits & 0x7fffffffu) > 0x7f800000u) {
    // NaN: truncate and force the quiet bit, so a payload living only in the low 16 bits does
    // not become inf.
    return static_cast<uint16_t>((bits >> 16) | 0x0040u);
  }
  // Round to nearest, ties to even: add 0x7fff plus the lowest kept bit. Overflow of the
  // largest finite values carries into the exponent and gives inf, as IEEE rounding does.
  const uint32_t rounding = 0x7fffu + ((bits >> 16) & 1u);
  return static_cast<uint16_t>((bits + rounding) >> 16);
}

float bf16_to_f32(uint16_t b) {
  const uint32_t bits = static_cast<uint32_t>(b) << 16;
  float f;
  std::memcpy(&f, &bits, sizeof f);
  return f;
}

float f16_to_f32(uint16_t h) {
  const uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
  uint32_t exp = (h >> 10) & 0x1fu;
  uint32_t mant = h & 0x3ffu;
  uint32_t bits;
  if (exp == 0x1f) {
    bits = sign | 0x7f800000u | (mant << 13);
  } else if (exp != 0) {
    bits = sign | ((exp + 112u) << 23) | (mant << 13);
  } else if (mant == 0) {
    bits = sign;
  } else {  // subnormal half (mant * 2^-24): normalize into a float
    exp = 113;
    while ((mant & 0x400u) == 0) {
      mant <<= 1;
      --exp;
    }
    bits = sign | (exp << 23) | ((mant & 0x3ffu) << 13);
  }
  float f;
  std::memcpy(&f, &bits, sizeof f);
  return f;
}

std::string dtype_name(int32_t dtype) {
  switch (dtype) {
    case PLINTH_DTYPE_F32:
      return "F32";
    case PLINTH_DTYPE_F16:
      return "F16";
    case PLINTH_DTYPE_BF16:
      return "BF16";
    case PLINTH_DTYPE_Q8_0:
      return "Q8_0";
    case PLINTH_DTYPE_Q4_0:
      return "Q4_0";
    case PLINTH_DTYPE_Q4_1:
      return "Q4_1";
    default:
      return "type id " + std::to_string(dtype) + " (unsupported)";
  }
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
  const Geometry g = geometry(t.dtype);
  if (g.block_elems == 0) {
    fail(t,
         "backend_cuda converts F32, F16, BF16, Q8_0, Q4_0 and Q4_1 tensors only; "
         "re-quantize the model to one of them (e.g. llama-quantize ... Q8_0)");
  }
  const uint64_t n = tensor_elements(t);
  if (t.dims[0] % g.block_elems != 0) {
    fail(t, "dims[0] = " + std::to_string(t.dims[0]) + " is not a multiple of the block size " +
                std::to_string(g.block_elems) + " (the file is malformed)");
  }
  const uint64_t blocks = n / g.block_elems;
  if (blocks > std::numeric_limits<uint64_t>::max() / g.block_bytes) {
    fail(t, "byte size overflows");
  }
  const uint64_t want = blocks * g.block_bytes;
  if (t.nbytes != want) {
    fail(t, "nbytes = " + std::to_string(t.nbytes) + " but " + std::to_string(n) +
                " elements need " + std::to_string(want) + " bytes (" + std::to_string(blocks) +
                " blocks of " + std::to_string(g.block_bytes) + " bytes; the file is malformed)");
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
  switch (t.dtype) {
    case PLINTH_DTYPE_F32:
      for (uint64_t i = 0; i < n; ++i) {
        float f;
        std::memcpy(&f, src + 4 * i, sizeof f);
        out[i] = f32_to_bf16(f);
      }
      return;
    case PLINTH_DTYPE_F16:
      for (uint64_t i = 0; i < n; ++i) out[i] = f32_to_bf16(f16_to_f32(load_u16(src + 2 * i)));
      return;
    case PLINTH_DTYPE_BF16:
      for (uint64_t i = 0; i < n; ++i) out[i] = load_u16(src + 2 * i);
      return;
    case PLINTH_DTYPE_Q8_0:
      convert_q8_0(src, n / kBlock, out);
      return;
    case PLINTH_DTYPE_Q4_0:
      convert_q4_0(src, n / kBlock, out);
      return;
    case PLINTH_DTYPE_Q4_1:
      convert_q4_1(src, n / kBlock, out);
      return;
    default:
      fail(t, "unsupported dtype");  // unreachable: check_convertible rejected it
  }
}

std::vector<uint16_t> to_bf16(const plinth_tensor_view& t) {
  check_convertible(t);
  std::vector<uint16_t> out(tensor_elements(t));
  to_bf16_into(t, out.data(), out.size());
  return out;
}

}  // namespace plinth::cuda
