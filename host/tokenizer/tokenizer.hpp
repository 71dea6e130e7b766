#pragma once
// Text <-> token ids for byte-level BPE models (GPT-2 style, as SmolLM2 uses), built from the
// GGUF `tokenizer.ggml.*` metadata and matching llama.cpp's tokenization of the same file.
//
// Pipeline of encode(): UTF-8 validation -> pre-tokenizer (PCRE2 regex passes, pre_tokenizer.hpp)
// -> per word, GPT-2 byte->unicode mapping + BPE merges by rank (bpe_model.hpp). Special-token
// text in user input is never matched: it is tokenized like any other text.
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
#include "tokenizer/token_type.hpp"
#include "tokenizer/utf8.hpp"  // InvalidUtf8Error

namespace plinth {

class GgufFile;

class Tokenizer {
 public:
  /// Builds from the `tokenizer.ggml.*` metadata of `file`: model (must be "gpt2", byte-level
  /// BPE), tokens, token_type (optional: all normal), merges, pre (optional: "default"),
  /// bos_token_id / eos_token_id (optional: -1), add_bos_token (optional: false).
  /// Throws std::runtime_error naming the key for missing or unsupported data.
  static Tokenizer from_gguf(const GgufFile& file);

  /// From plain data. `tokens[i]` is the text of id i in GPT-2 byte-mapped form ("Ġthe");
  /// `token_types` is empty (all normal) or one TokenType value per token; `merges` are
  /// "left right" strings in rank order; `pre` is a PreTokenizer name; `bos_id`/`eos_id` are ids
  /// or -1 for none. Throws std::invalid_argument for inconsistent sizes or ids out of range,
  /// std::runtime_error for an unsupported `pre` or a malformed merge.
  Tokenizer(std::vector<std::string> tokens, std::vector<int32_t> token_types,
            std::vector<std::string> merges, std::string pre, int32_t bos_id, int32_t eos_id,
            bool add_bos);

  /// Encodes UTF-8 `text` into token ids. With `add_special`, BOS is prepended when the model
  /// asks for it (add_bos_token). Throws InvalidUtf8Error (a std::invalid_argument; what() gives
  /// the byte offset) for ill-formed UTF-8, std::invalid_argument naming the byte and its offset
  /// for a byte the vocabulary has no token for (some control bytes in SmolLM2's). Special-token
  /// text in `text` is plain text.
  std::vector<int32_t> encode(std::string_view text, bool add_special) const;

  /// A piece of a prompt: `special` = true means `text` is exactly one special token's text
  /// ("<|im_start|>") and becomes that id; false means plain text, encoded as by encode().
  struct Segment {
    std::string text;
    bool special;
  };
  /// Encodes segments in order (the chat template's output). `add_special` as in encode(), BOS
  /// once at the front: not added when the first segment is already the BOS token (a template
  /// that writes bos_token). Throws std::invalid_argument naming the segment index when a special
  /// segment is not a special token's text, InvalidUtf8Error (offset within the segment) for
  /// ill-formed plain text.
  std::vector<int32_t> encode_segments(const std::vector<Segment>& segments,
                                       bool add_special) const;

  /// Concatenated bytes of `ids`. May end in (or, for arbitrary id sequences, contain) partial
  /// UTF-8. With `skip_special`, control and unknown tokens are left out (user-defined tokens
  /// are text and always kept, as in llama.cpp). Throws std::out_of_range for an id outside
  /// [0, vocab_size()).
  std::string decode(std::span<const int32_t> ids, bool skip_special = false) const;

  /// The raw bytes token `id` stands for (special tokens: their text). Throws std::out_of_range.
  const std::string& token_to_bytes(int32_t id) const;

  /// Id of the vocabulary entry whose text (byte-mapped form, as in `tokens`) is exactly `text`.
  std::optional<int32_t> find_token(std::string_view text) const;

  int32_t bos_id() const { return bos_id_; }  // -1 when the model has none
  int32_t eos_id() const { return eos_id_; }  // -1 when the model has none
  bool add_bos() const { return add_bos_; }
  int32_t vocab_size() const { return static_cast<int32_t>(tokens_.size()); }
  const std::string& pre_tokenizer_name() const { return pre_.name(); }
  /// Throws std::out_of_range for an id outside the vocabulary.
  TokenType token_type(int32_t id) const;
  /// Control, unknown and user-defined tokens: the ones only encode_segments produces.
  bool is_special(int32_t id) const;

 private:
  void check_id(int32_t id) const;

  std::vector<std::string> tokens_;
  std::vector<TokenType> types_;
  std::vector<std::string> bytes_;  // per id: what decode() outputs
  TokenIdMap ids_;
  PreTokenizer pre_;
  BpeModel bpe_;
  int32_t bos_id_, eos_id_;
  bool add_bos_;
};

}  // namespace plinth
