#pragma once
// Text <-> token ids, built from the GGUF `tokenizer.ggml.*` metadata and matching llama.cpp's
// tokenization of the same file (src/llama-vocab.cpp, quirks included), for its two tokenizer
// models that the supported architectures use:
//   * "gpt2": byte-level BPE (SmolLM2, Llama 3, Qwen2/3, Mistral Nemo, ...), with the
//     pre-tokenizer `tokenizer.ggml.pre` selects (pre_tokenizer.hpp);
//   * "llama": SentencePiece-style BPE over scores with byte fallback (Llama 2, Mistral v0.x,
//     Gemma, Phi-3; spm_model.hpp), spaces written as U+2581, `add_space_prefix`.
//
// Pipeline of encode(): UTF-8 validation -> the user-defined tokens written in the text become
// their ids (special_partition.hpp; control tokens such as "<|im_start|>" never do: typed by a
// user they are plain text) -> per text fragment, the model: BPE (pre-tokenizer regex passes, then
// per word GPT-2 byte->unicode mapping + merges by rank, bpe_model.hpp) or SPM (a space prefix
// where llama.cpp adds one, spaces escaped, merges by score).
//
// Thread rules: a Tokenizer is immutable after construction; all const methods may be called
// from any number of threads at once.

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "tokenizer/bpe_model.hpp"
#include "tokenizer/pre_tokenizer.hpp"
#include "tokenizer/special_partition.hpp"
#include "tokenizer/spm_model.hpp"
#include "tokenizer/token_attributes.hpp"
#include "tokenizer/token_type.hpp"
#include "tokenizer/utf8.hpp"  // InvalidUtf8Error

namespace plinth {

class GgufFile;

/// Everything a Tokenizer is built from (the GGUF `tokenizer.ggml.*` keys, see from_gguf).
struct TokenizerSpec {
  /// "gpt2" (byte-level BPE) or "llama" (SentencePiece-style).
  std::string model = "gpt2";
  /// Text of each id: GPT-2 byte-mapped form for "gpt2" ("Ġthe"), SentencePiece form for "llama"
  /// ("▁the", "<0x0A>").
  std::vector<std::string> tokens;
  /// Empty (all normal) or one TokenType value per token.
  std::vector<int32_t> token_types;
  /// "llama": empty (all 0) or one score per token. Unused for "gpt2".
  std::vector<float> scores;
  /// "gpt2": "left right" merges in rank order. Unused for "llama".
  std::vector<std::string> merges;
  /// "gpt2": a PreTokenizer name. Unused for "llama".
  std::string pre = "default";
  int32_t bos_id = -1, eos_id = -1;  // -1: none
  /// Whether encode(add_special) prepends BOS; nullopt: llama.cpp's default ("llama": true;
  /// "gpt2": the pre-tokenizer's default_add_bos()).
  std::optional<bool> add_bos;
  /// "llama": whether a space is prepended to text at the start and after each special token;
  /// nullopt: true (llama.cpp's default). Unused for "gpt2".
  std::optional<bool> add_space_prefix;
  /// What llama.cpp's per-token attribute fixes read (general.name for Phi-3's RSTRIP, ...).
  TokenAttributeInputs attribute_inputs;
};

class Tokenizer {
 public:
  /// Builds from the `tokenizer.ggml.*` metadata of `file`: model ("gpt2" or "llama"), tokens,
  /// token_type (optional: all normal), scores ("llama", optional: all 0), merges ("gpt2"), pre
  /// ("gpt2", optional: "default"), bos_token_id / eos_token_id (optional: -1, or 1 / 2 for
  /// "llama" as in llama.cpp), add_bos_token (optional: llama.cpp's default),
  /// add_space_prefix ("llama", optional: true), fim_*_token_id and general.name (token
  /// attributes). Throws std::runtime_error naming the key for missing or unsupported data (an
  /// unknown model or pre-tokenizer is named with the known ones).
  static Tokenizer from_gguf(const GgufFile& file);

  /// From a spec. Throws std::invalid_argument for inconsistent sizes or ids out of range,
  /// std::runtime_error for an unsupported model or `pre`, or a malformed merge.
  explicit Tokenizer(TokenizerSpec spec);

  /// A byte-level BPE tokenizer from plain data. `tokens[i]` is the text of id i in GPT-2
  /// byte-mapped form ("Ġthe");
  /// `token_types` is empty (all normal) or one TokenType value per token; `merges` are
  /// "left right" strings in rank order; `pre` is a PreTokenizer name; `bos_id`/`eos_id` are ids
  /// or -1 for none. Throws std::invalid_argument for inconsistent sizes or ids out of range,
  /// std::runtime_error for an unsupported `pre` or a malformed merge.
  Tokenizer(std::vector<std::string> tokens, std::vector<int32_t> token_types,
            std::vector<std::string> merges, std::string pre, int32_t bos_id, int32_t eos_id,
            bool add_bos);

  /// Encodes UTF-8 `text` into token ids. With `add_special`, BOS is prepended when the model
  /// asks for it (add_bos_token). Throws InvalidUtf8Error (a std::invalid_argument; what() gives
  /// the byte offset) for ill-formed UTF-8, std::invalid_argument naming the byte for a byte the
  /// vocabulary has no token for (some control bytes in SmolLM2's). The text of a user-defined
  /// token becomes that token (as in llama.cpp); control-token text is plain text.
  std::vector<int32_t> encode(std::string_view text, bool add_special) const;

  /// A piece of a prompt: `special` = true means `text` is exactly one special token's text
  /// ("<|im_start|>") and becomes that id; false means plain text, encoded as by encode().
  struct Segment {
    std::string text;
    bool special;
  };
  /// Encodes segments in order (the chat template's output). `add_special` as in encode(), BOS
  /// once at the front: not added when the first segment is already the BOS token (a template
  /// that writes bos_token). Plain segments are split at user-defined tokens as by encode(); for
  /// "llama" a plain segment after a special one gets llama.cpp's space prefix; whitespace after
  /// an RSTRIP token (Phi-3's) or before an LSTRIP one is dropped. The result equals llama.cpp's
  /// tokenization of the concatenated text with parse_special when the plain text holds no
  /// control-token text. Throws
  /// std::invalid_argument naming the segment index when a special
  /// segment is not a special token's text, InvalidUtf8Error (offset within the segment) for
  /// ill-formed plain text.
  std::vector<int32_t> encode_segments(const std::vector<Segment>& segments,
                                       bool add_special) const;

  /// Concatenated bytes of `ids` (llama.cpp token_to_piece per id: special tokens give their
  /// text, normal ones their bytes with U+2581 as a space for "llama", byte tokens their byte,
  /// unused / undefined ones nothing). May end in (or, for arbitrary id sequences, contain)
  /// partial UTF-8. With `skip_special`, control and unknown tokens are left out (user-defined
  /// tokens are text and always kept, as in llama.cpp). Throws std::out_of_range for an id
  /// outside [0, vocab_size()).
  std::string decode(std::span<const int32_t> ids, bool skip_special = false) const;

  /// The raw bytes token `id` stands for (special tokens: their text). Throws std::out_of_range.
  const std::string& token_to_bytes(int32_t id) const;

  /// Id of the vocabulary entry whose text (byte-mapped form, as in `tokens`) is exactly `text`.
  std::optional<int32_t> find_token(std::string_view text) const;

  int32_t bos_id() const { return bos_id_; }  // -1 when the model has none
  int32_t eos_id() const { return eos_id_; }  // -1 when the model has none
  bool add_bos() const { return add_bos_; }
  int32_t vocab_size() const { return static_cast<int32_t>(tokens_.size()); }
  /// "gpt2" or "llama".
  const std::string& model() const { return model_; }
  /// The BPE pre-tokenizer's name; "" for "llama".
  const std::string& pre_tokenizer_name() const;
  /// Throws std::out_of_range for an id outside the vocabulary.
  TokenType token_type(int32_t id) const;
  /// llama.cpp's attribute bits of the token (token_attributes.hpp). Throws std::out_of_range.
  uint32_t token_attributes(int32_t id) const;
  /// Control, unknown and user-defined tokens (after llama.cpp's attribute fixes).
  bool is_special(int32_t id) const;

 private:
  void check_id(int32_t id) const;
  // Appends the ids of the fragments (special_partition.hpp) to `out`.
  void encode_fragments(const std::vector<Fragment>& fragments, std::vector<int32_t>& out) const;
  // Drops the whitespace next to special segments whose token is RSTRIP / LSTRIP.
  void strip_around_special(std::vector<Fragment>& fragments) const;
  void encode_bpe_text(std::string_view text, std::vector<int32_t>& out) const;
  void encode_spm_text(std::string_view text, bool space_prefix, std::vector<int32_t>& out) const;

  std::string model_;
  bool spm_;  // model_ == "llama"
  std::vector<std::string> tokens_;
  std::vector<TokenType> types_;
  std::vector<uint32_t> attrs_;
  std::vector<float> scores_;
  std::vector<std::string> bytes_;  // per id: what decode() outputs
  TokenIdMap ids_;
  SpecialPartition partition_;
  std::optional<PreTokenizer> pre_;    // "gpt2"
  std::optional<BpeModel> bpe_;        // "gpt2"
  std::optional<SpmModel> spm_model_;  // "llama"
  int32_t bos_id_, eos_id_;
  bool add_bos_;
  bool add_space_prefix_ = false;
};

}  // namespace plinth
