// A smaller draft model cut from a GGUF model: its first L transformer blocks, the same
// embeddings, final norm, LM head and tokenizer. For speculative decoding, whose draft must share
// the target's tokenizer.
#pragma once

#include <cstdint>
#include <string>

#include "model/gguf_writer.hpp"

namespace plinth {

class GgufFile;

/// The block index N of a tensor named "blk.N.<anything>" (N decimal digits), or -1 for a tensor
/// outside the blocks (token_embd.weight, output_norm.weight, output.weight, rope_freqs.weight).
int64_t gguf_block_index(const std::string& tensor_name);

/// A writer holding the first `layers` blocks of `src`:
/// - metadata: every pair of `src` in file order, with `<arch>.block_count` set to `layers`
///   (same value type), `general.name` suffixed " (first <layers> layers)" when present, and each
///   `<arch>.*` array of block_count elements (a per-layer value, as llama.cpp reads them) cut to
///   its first `layers` elements; general.alignment is kept, so the alignment is the source's;
/// - tensors: every tensor of `src` outside the blocks and those of blocks 0..layers-1, in the
///   source's order, with the same names, ggml types, dims and bytes; none of the deeper blocks.
/// The tensor data is referenced in `src`'s mapping: `src` must outlive the writer's last write.
/// Throws std::invalid_argument when `layers` is outside 1..block_count-1 (the message names the
/// model's block count), GgufError when `src` lacks general.architecture or <arch>.block_count.
GgufWriter select_first_layers(const GgufFile& src, uint32_t layers);

}  // namespace plinth
