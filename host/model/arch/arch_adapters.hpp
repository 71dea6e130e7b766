// The architecture adapters: one file per architecture (host/model/arch/<arch>.cpp) reads its
// `<arch>.*` keys and tensor set into a ModelConfig (sizes + the architecture description that
// crosses the ABI as plinth_arch_desc), as llama.cpp's src/models/<arch>.cpp does. Backends
// implement the description's features, never architectures.
#pragma once

#include <span>
#include <string>

#include "model/arch/arch_reader.hpp"

namespace plinth::arch {

/// One architecture: its general.architecture name and its reader (after read_common).
struct ArchAdapter {
  const char* name;
  void (*read)(const ArchReader& r, ModelConfig& c);
};

/// Every architecture plinth runs, in name order.
std::span<const ArchAdapter> arch_adapters();

/// "gemma3, granite, llama, olmo2, phi3, qwen2, qwen3, smollm3".
std::string known_architectures();

void read_llama(const ArchReader& r, ModelConfig& c);
void read_qwen2(const ArchReader& r, ModelConfig& c);
void read_qwen3(const ArchReader& r, ModelConfig& c);
void read_gemma3(const ArchReader& r, ModelConfig& c);
void read_phi3(const ArchReader& r, ModelConfig& c);
void read_granite(const ArchReader& r, ModelConfig& c);
void read_olmo2(const ArchReader& r, ModelConfig& c);
void read_smollm3(const ArchReader& r, ModelConfig& c);

}  // namespace plinth::arch
