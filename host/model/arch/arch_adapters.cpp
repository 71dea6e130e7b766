// The table of architecture adapters.
#include "model/arch/arch_adapters.hpp"

#include <array>

namespace plinth::arch {
namespace {

constexpr std::array<ArchAdapter, 5> kAdapters = {{{"gemma3", read_gemma3},
                                                   {"llama", read_llama},
                                                   {"phi3", read_phi3},
                                                   {"qwen2", read_qwen2},
                                                   {"qwen3", read_qwen3}}};

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
