#pragma once
// The model of a draft backend (docs/manifest.md, `"role": "draft"`): opened like the served model
// (model/model_desc.hpp) and checked to share its vocabulary, which speculative decoding needs
// (draft token ids are verified by the target as its own ids).

#include <cstdint>

#include "model/gguf.hpp"
#include "model/model_desc.hpp"
#include "runtime/manifest.hpp"

namespace plinth {

/// Opens the GGUF file of `draft.model` (a draft backend's entry of `manifest`) and reads its
/// LLaMA-family config. The caller owns the result; the descriptor in it points into the mapping.
/// Throws ManifestError at "<draft.json_path>.model" when the file does not exist or is not a
/// usable model (the GGUF reader's message inside, with the fix).
LoadedModel load_draft_model(const Manifest& manifest, const PluginEntry& draft);

/// Refuses a draft model whose vocabulary differs from the target's: the vocab sizes
/// (`target_vocab`, `draft_vocab`: ModelConfig::vocab_size), then tokenizer.ggml.tokens id by id
/// (both files must carry it). Throws ManifestError at "<draft.json_path>.model" naming both files
/// and the two sizes or the first differing token id, and the fix.
void check_same_vocabulary(const Manifest& manifest, const PluginEntry& draft,
                           const GgufFile& target, uint32_t target_vocab,
                           const GgufFile& draft_file, uint32_t draft_vocab);

}  // namespace plinth
