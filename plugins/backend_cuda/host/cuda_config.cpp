#include "cuda_config.hpp"

#include <cmath>
#include <limits>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>

namespace plinth::cuda {
namespace {

constexpr int64_t kMaxDevice = 1023;
constexpr int64_t kMaxNumTokens = 1 << 20;
constexpr int64_t kMaxNumSeqs = 1 << 16;

[[noreturn]] void fail(const std::string& key, const nlohmann::json& value,
                       const std::string& why) {
  throw std::invalid_argument("backend_cuda config: " + key + " = " + value.dump() + " " + why);
}

// An integer (or a whole float, as the schema's "integer" accepts) in [lo, hi].
int64_t integer_in(const std::string& key, const nlohmann::json& v, int64_t lo, int64_t hi,
                   const std::string& fix) {
  const std::string range = "must be an integer between " + std::to_string(lo) + " and " +
                            std::to_string(hi) + "; " + fix;
  if (v.is_number_integer()) {
    // Unsigned values above int64 range fail the range check through the float path below.
    if (v.is_number_unsigned() && v.get<uint64_t>() > static_cast<uint64_t>(hi)) {
      fail(key, v, range);
    }
    const int64_t i = v.get<int64_t>();
    if (i < lo || i > hi) fail(key, v, range);
    return i;
  }
  if (v.is_number_float()) {
    const double d = v.get<double>();
    if (std::isfinite(d) && std::floor(d) == d && d >= static_cast<double>(lo) &&
        d <= static_cast<double>(hi)) {
      return static_cast<int64_t>(d);
    }
  }
  fail(key, v, range);
}

}  // namespace

const char* const kCudaConfigSchema = R"json({
  "type": "object",
  "additionalProperties": false,
  "properties": {
    "device": {"type": "integer", "minimum": 0, "maximum": 1023, "default": 0,
               "description": "CUDA device ordinal (as nvidia-smi / CUDA_VISIBLE_DEVICES number them)"},
    "memory_fraction": {"type": "number", "exclusiveMinimum": 0, "maximum": 1, "default": 0.9,
                        "description": "share of the device's free memory, after the weights (bf16) and the activation buffers, that the KV pool takes"},
    "gemm": {"type": "string", "enum": ["invariant", "fast"], "default": "invariant",
             "description": "invariant (default): own bf16 GEMM with a fixed reduction order (f32 accumulate, no split-K), so greedy ids do not depend on batch size or padding; fast: cuBLAS (bf16 in, f32 accumulate), whose algorithm depends on the shape"},
    "max_num_tokens": {"type": "integer", "minimum": 1, "maximum": 1048576, "default": 8192,
                       "description": "rows of the activation buffers: the largest number of new tokens in one forward (prefill chunks included); must be >= max_num_seqs"},
    "max_num_seqs": {"type": "integer", "minimum": 1, "maximum": 65536, "default": 256,
                     "description": "the largest number of sequences in one forward; rows of the logits buffer"}
  }
})json";

CudaConfig parse_cuda_config(const char* json) {
  return json == nullptr ? CudaConfig{} : parse_cuda_config(std::string_view(json));
}

CudaConfig parse_cuda_config(std::string_view text) {
  CudaConfig c;
  if (text.find_first_not_of(" \t\r\n") == std::string_view::npos) return c;
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(text);
  } catch (const nlohmann::json::exception& e) {
    throw std::invalid_argument(std::string("backend_cuda config: not JSON (") + e.what() +
                                "); write an object such as {\"device\": 0}");
  }
  if (!j.is_object()) {
    throw std::invalid_argument("backend_cuda config: " + j.dump() +
                                " must be a JSON object such as {\"device\": 0}");
  }
  for (const auto& [key, value] : j.items()) {
    if (key == "device") {
      c.device = static_cast<int>(integer_in(
          key, value, 0, kMaxDevice, "pick one of the devices nvidia-smi lists (0 is the first)"));
    } else if (key == "memory_fraction") {
      const double f = value.is_number() ? value.get<double>() : std::nan("");
      if (!(f > 0.0 && f <= 1.0)) {
        fail(key, value,
             "must be a number in (0, 1]: the share of free device memory the KV pool takes "
             "(default 0.9)");
      }
      c.memory_fraction = f;
    } else if (key == "gemm") {
      const std::string g = value.is_string() ? value.get<std::string>() : "";
      if (g == "invariant") {
        c.invariant_gemm = true;
      } else if (g == "fast") {
        c.invariant_gemm = false;
      } else {
        fail(key, value,
             "must be \"invariant\" (batch-invariant own GEMM, the default) or \"fast\" "
             "(cuBLAS)");
      }
    } else if (key == "max_num_tokens") {
      c.max_num_tokens = static_cast<uint32_t>(integer_in(
          key, value, 1, kMaxNumTokens, "it sizes the activation buffers (default 8192)"));
    } else if (key == "max_num_seqs") {
      c.max_num_seqs = static_cast<uint32_t>(integer_in(
          key, value, 1, kMaxNumSeqs, "it bounds the sequences of one forward (default 256)"));
    } else {
      throw std::invalid_argument("backend_cuda config: unknown key \"" + key +
                                  "\" (allowed: device, memory_fraction, gemm, max_num_tokens, "
                                  "max_num_seqs)");
    }
  }
  if (c.max_num_seqs > c.max_num_tokens) {
    throw std::invalid_argument(
        "backend_cuda config: max_num_seqs = " + std::to_string(c.max_num_seqs) +
        " exceeds max_num_tokens = " + std::to_string(c.max_num_tokens) +
        " (a decode step of max_num_seqs sequences needs that many token rows); raise "
        "max_num_tokens or lower max_num_seqs");
  }
  return c;
}

}  // namespace plinth::cuda
