#include "model/ggml_weight_mix.hpp"

#include <algorithm>
#include <cstdio>
#include <map>

#include "plinth/ggml_format.hpp"

namespace plinth {
namespace {

bool is_matrix(const GgufTensor& t) {
  return t.dims.size() == 2 && t.dims[1] > 1;
}

std::string mib(uint64_t bytes) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f MiB", static_cast<double>(bytes) / (1024.0 * 1024.0));
  return buf;
}

}  // namespace

std::vector<GgmlTypeShare> ggml_type_mix(const GgufFile& f) {
  std::map<std::string, GgmlTypeShare> by_type;
  for (const GgufTensor& t : f.tensors()) {
    GgmlTypeShare& s = by_type[ggml_type_name(t.type)];
    s.type = ggml_type_name(t.type);
    ++s.tensors;
    s.elements += t.num_elements();
    s.bytes += t.nbytes;
  }
  std::vector<GgmlTypeShare> out;
  out.reserve(by_type.size());
  for (auto& [name, s] : by_type) out.push_back(s);
  std::stable_sort(out.begin(), out.end(), [](const GgmlTypeShare& a, const GgmlTypeShare& b) {
    return a.bytes > b.bytes;
  });
  return out;
}

uint64_t ggml_cpu_panel_bytes(const GgufFile& f) {
  const bool tied = f.find_tensor("output.weight") == nullptr;
  uint64_t bytes = 0;
  for (const GgufTensor& t : f.tensors()) {
    if (!is_matrix(t) || (t.name == "token_embd.weight" && !tied)) continue;
    const ggml::Format& fmt = ggml::format(static_cast<int32_t>(t.type));
    const uint64_t block = ggml::cpu_panel_block_bytes(fmt.cpu_panel);
    if (block == 0) continue;  // F32 / F16 / BF16: read in place
    bytes += (t.dims[1] + 15) / 16 * (t.dims[0] / 32) * block;
  }
  return bytes;
}

uint64_t ggml_bf16_matrix_bytes(const GgufFile& f) {
  uint64_t bytes = 0;
  for (const GgufTensor& t : f.tensors()) {
    if (is_matrix(t)) bytes += 2 * t.num_elements();
  }
  return bytes;
}

std::string ggml_type_mix_text(const std::vector<GgmlTypeShare>& mix) {
  std::string s;
  for (const GgmlTypeShare& m : mix) {
    if (!s.empty()) s += ", ";
    s += m.type + " " + std::to_string(m.tensors) + " tensors " + mib(m.bytes);
  }
  return s;
}

}  // namespace plinth
