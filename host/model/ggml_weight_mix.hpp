// The tensor type mix of a GGUF file and the memory its weights take as each backend holds them,
// computed from the SDK's format table (plinth/ggml_format.hpp). For `plinth manifest check`.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "model/gguf.hpp"

namespace plinth {

/// One type of the file: how many tensors, elements and file bytes it holds.
struct GgmlTypeShare {
  std::string type;  ///< "Q4_K" ...
  uint64_t tensors = 0;
  uint64_t elements = 0;
  uint64_t bytes = 0;  ///< in the file
};

/// The file's types, most bytes first.
std::vector<GgmlTypeShare> ggml_type_mix(const GgufFile& f);

/// Bytes backend_cpu's panels take for the file's weight matrices: every 2-D tensor of a type with
/// a panel layout (the table's cpu_panel), except token_embd.weight when the file has an
/// output.weight (token_embd is then only looked up, read in place), as ceil(rows / 16) panels ×
/// (row length / 32) panel blocks × the layout's block bytes. The file mapping comes on top (the
/// embedding, norms and F32/F16/BF16 matrices are read from it in place).
uint64_t ggml_cpu_panel_bytes(const GgufFile& f);

/// Bytes backend_cuda's bf16 copies of the file's 2-D tensors take (2 per element).
uint64_t ggml_bf16_matrix_bytes(const GgufFile& f);

/// "Q4_K 150 tensors 64.1 MiB, Q6_K 31 tensors 22.0 MiB, ..." for one line of output.
std::string ggml_type_mix_text(const std::vector<GgmlTypeShare>& mix);

}  // namespace plinth
