#include "dequantize.hpp"

#include <stdexcept>
#include <string>

namespace plinth::cpu {

void dequantize(WeightType type, const void* data, int64_t first, int64_t count, float* out) {
  const int64_t be = block_elems(type);
  if (data == nullptr || out == nullptr) {
    throw std::invalid_argument("dequantize: data and out must not be null");
  }
  if (first < 0 || count < 0 || first % be != 0 || count % be != 0) {
    throw std::invalid_argument(
        std::string("dequantize(") + weight_type_name(type) + "): first=" + std::to_string(first) +
        " and count=" + std::to_string(count) +
        " must be non-negative multiples of the block size " + std::to_string(be));
  }
  const auto* bytes = static_cast<const uint8_t*>(data) + first / be * block_bytes(type);
  // The SDK's one decoder (this library builds with -ffp-contract=off, as it requires).
  ggml::decode_blocks(ggml::format(static_cast<int32_t>(type)), bytes,
                      static_cast<uint64_t>(count / be), out);
}

void dequantize_rows(const WeightView& w, int64_t row_begin, int64_t row_end, float* out) {
  validate(w);
  if (row_begin < 0 || row_end > w.rows || row_begin > row_end) {
    throw std::invalid_argument("dequantize_rows: row range [" + std::to_string(row_begin) + ", " +
                                std::to_string(row_end) + ") is outside [0, " +
                                std::to_string(w.rows) + ")");
  }
  dequantize(w.type, w.data, row_begin * w.cols, (row_end - row_begin) * w.cols, out);
}

}  // namespace plinth::cpu
