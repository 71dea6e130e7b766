// The table of architecture adapters.
#include "model/arch/arch_adapters.hpp"

#include <array>

namespace plinth::arch {
namespace {

constexpr std::array<ArchAdapter, 8> kAdapters = {{{"gemma3", read_gemma3},
                                                   {"granite", read_granite},
                                                   {"llama", read_llama},
                                                   {"olmo2", read_olmo2},
                                                   {"phi3", read_phi3},
                                                   {"qwen2", read_qwen2},
                                                   {"qwen3", read_qwen3},
                                                   {"smollm3", read_smollm3}}};

}  // namespace

std::span<const ArchAdapter> arch_adapters() {
  return kAdapters;
}

std::string known_architectures() {
  std::string out;
  for (const ArchAdapter& a : kAdapters) out += (out.empty() ? "" : ", ") + std::string(a.name);
  return out;
}

}  // namespace plinth::arch
