#include "weight_types.hpp"

#include <stdexcept>
#include <string>

namespace plinth::cpu {
namespace {

const ggml::Format& row(WeightType type) {
  return ggml::format(static_cast<int32_t>(type));  // throws for a type outside the table
}

}  // namespace

const char* weight_type_name(WeightType type) {
  const ggml::Format* f = ggml::find_format(static_cast<int32_t>(type));
  return f != nullptr ? f->name : "unknown";
}

int64_t block_elems(WeightType type) {
  return row(type).block_elems;
}

int64_t block_bytes(WeightType type) {
  return row(type).block_bytes;
}

bool weight_type_from_dtype(int32_t dtype, WeightType* out) {
  if (ggml::find_format(dtype) == nullptr) return false;
  *out = static_cast<WeightType>(dtype);
  return true;
}

PanelKind panel_kind(WeightType type) {
  // The format table's row says which panel layout serves the type.
  switch (row(type).cpu_panel) {
    case ggml::CpuPanel::kQ4_0:
      return PanelKind::kQ4_0;
    case ggml::CpuPanel::kQ4_1:
      return PanelKind::kQ4_1;
    case ggml::CpuPanel::kQ8_0:
      return PanelKind::kQ8_0;
    case ggml::CpuPanel::kQ5:
      return PanelKind::kQ5;
    case ggml::CpuPanel::kQ5_1:
      return PanelKind::kQ5_1;
    case ggml::CpuPanel::kIQ4:
      return PanelKind::kIQ4;
    case ggml::CpuPanel::kK4:
      return PanelKind::kK4;
    case ggml::CpuPanel::kK5:
      return PanelKind::kK5;
    case ggml::CpuPanel::kIQ4X:
      return PanelKind::kIQ4X;
    case ggml::CpuPanel::kK6:
      return PanelKind::kK6;
    case ggml::CpuPanel::kK3:
      return PanelKind::kK3;
    case ggml::CpuPanel::kK2:
      return PanelKind::kK2;
    case ggml::CpuPanel::kNone:
      break;
  }
  throw std::invalid_argument(std::string("panel layout: weight type ") + weight_type_name(type) +
                              " has none (quantized types of the format table only)");
}

const char* panel_kind_name(PanelKind kind) {
  switch (kind) {
    case PanelKind::kQ4_0:
      return "Q4_0";
    case PanelKind::kQ4_1:
      return "Q4_1";
    case PanelKind::kQ8_0:
      return "Q8_0";
    case PanelKind::kQ5:
      return "Q5";
    case PanelKind::kQ5_1:
      return "Q5_1";
    case PanelKind::kIQ4:
      return "IQ4";
    case PanelKind::kK4:
      return "K4";
    case PanelKind::kK5:
      return "K5";
    case PanelKind::kIQ4X:
      return "IQ4X";
    case PanelKind::kK6:
      return "K6";
    case PanelKind::kK3:
      return "K3";
    case PanelKind::kK2:
      return "K2";
  }
  return "unknown";
}

int64_t row_bytes(WeightType type, int64_t cols) {
  const int64_t be = block_elems(type);
  if (cols < 0 || cols % be != 0) {
    throw std::invalid_argument(std::string("row_bytes: cols=") + std::to_string(cols) +
                                " is not a non-negative multiple of the " + weight_type_name(type) +
                                " block size " + std::to_string(be));
  }
  return cols / be * block_bytes(type);
}

bool is_quantized(WeightType type) {
  return row(type).quantized;
}

void validate(const WeightView& w) {
  const std::string name = std::string("WeightView(") + weight_type_name(w.type) + ")";
  if (ggml::find_format(static_cast<int32_t>(w.type)) == nullptr) {
    throw std::invalid_argument(name + ": type " + std::to_string(static_cast<int32_t>(w.type)) +
                                " is not in the format table");
  }
  if (w.data == nullptr && w.panels == nullptr && w.int8_panels == nullptr) {
    throw std::invalid_argument(name + ": data is null (and no panel copy is set)");
  }
  if (w.rows <= 0 || w.cols <= 0) {
    throw std::invalid_argument(name + ": rows=" + std::to_string(w.rows) +
                                " and cols=" + std::to_string(w.cols) + " must both be > 0");
  }
  if (w.cols % block_elems(w.type) != 0) {
    throw std::invalid_argument(name + ": cols=" + std::to_string(w.cols) +
                                " must be a multiple of the block size " +
                                std::to_string(block_elems(w.type)));
  }
}

}  // namespace plinth::cpu
