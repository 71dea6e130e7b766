#include "bound_report.hpp"

#include <cstdio>

#include "cpu_info.hpp"

namespace plinth::roofline {
namespace {

template <class... Doubles>
std::string format(const char* fmt, Doubles... values) {
  char buf[256];
  std::snprintf(buf, sizeof buf, fmt, static_cast<double>(values)...);
  return buf;
}

bool has_level(const Bounds& b, const std::string& where) {
  for (const Bandwidth& x : b.bandwidth) {
    if (x.where == where) return true;
  }
  return false;
}

}  // namespace

bool matmul_is_int8(const std::string& matmul) {
  if (matmul == "auto") return cpu_info().int8_isa != Isa::kScalar;  // backend_cpu's choice
  return matmul == "int8" || matmul == "simd";
}

FigureBounds figure_bounds(const Bounds& b, const ModelCost& cost, bool int8, int threads,
                           const BenchShape& shape) {
  const double peak = int8 ? b.int8_macs(threads) : b.f32_fmas(threads);
  const double f32 = b.f32_fmas(threads);
  const double dram = b.gbps("DRAM", threads);
  const auto bytes = static_cast<double>(cost.decode_bytes());
  const double p = shape.prompt_tokens;
  FigureBounds f;
  f.prefill = step_bound_tps(cost, bytes, p, 1, (p + 1) / 2, dram, peak, f32);
  f.decode_b1 = step_bound_tps(cost, bytes, 1, 1, shape.decode_context, dram, peak, f32);
  f.decode_bn =
      step_bound_tps(cost, bytes, shape.batch, shape.batch, shape.decode_context, dram, peak, f32);
  return f;
}

std::string describe_bounds(const Bounds& b, const ModelCost& cost, bool int8,
                            const std::vector<int>& threads) {
  std::string s =
      "roofline (" + b.source + ", median of " + std::to_string(b.runs) + " runs): " + b.cpu_model +
      "; matmul bound: " +
      (int8 ? "int8 dot-product peak (" + b.int8_isa + ")" : "f32 FMA peak (" + b.f32_isa + ")") +
      ", attention at the f32 peak\n";
  for (int t : threads) {
    s += format("  %.0f thread(s): DRAM triad %.1f GB/s", t, b.gbps("DRAM", t));
    if (has_level(b, "L3")) s += format(", L3 triad %.1f GB/s", b.gbps("L3", t));
    s += format(", int8 %.1f GMAC/s, f32 %.1f GFMA/s\n", b.int8_macs(t) / 1e9, b.f32_fmas(t) / 1e9);
  }
  s += format("  model per token: layer matrices %.1f MB, LM head %.1f MB (%.1f MB in all); ",
              static_cast<double>(cost.layer_bytes) / 1e6,
              static_cast<double>(cost.head_bytes) / 1e6,
              static_cast<double>(cost.decode_bytes()) / 1e6);
  s +=
      format("%.1f M MACs in the layers, %.1f M in the head\n",
             static_cast<double>(cost.layer_macs) / 1e6, static_cast<double>(cost.head_macs) / 1e6);
  s += "  types: layers " + cost.layer_types + ", head " + cost.head_type +
       ". Bounds use the GGUF bytes, which backend_cpu's packed panel copies equal (rows padded "
       "to 16; plugins/backend_cpu/README.md)\n";
  return s;
}

std::string of_bound(double value, double bound) {
  if (bound <= 0) return "n/a";
  return format("%.2f of %.0f", value / bound, bound);
}

}  // namespace plinth::roofline
