#include "tokenizer/tokenizer.hpp"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <stdexcept>
#include <utility>

#include "tokenizer/byte_unicode.hpp"

namespace plinth {
namespace {

constexpr std::string_view kSpmSpace = "\xE2\x96\x81";  // U+2581, SentencePiece's space

// Empty texts become "[EMPTY_<id>]" as in llama.cpp (so that every id has a distinct text).
std::vector<std::string> checked_tokens(std::vector<std::string> tokens) {
  if (tokens.empty()) throw std::invalid_argument("tokenizer: empty vocabulary");
  for (size_t i = 0; i < tokens.size(); ++i) {
    if (tokens[i].empty()) tokens[i] = "[EMPTY_" + std::to_string(i) + "]";
  }
  return tokens;
}

TokenIdMap build_ids(const std::vector<std::string>& tokens) {
  TokenIdMap ids;
  ids.reserve(tokens.size());
  // A duplicated text maps to its last id, as in llama.cpp (token_to_id[text] = i).
  for (size_t i = 0; i < tokens.size(); ++i) ids[tokens[i]] = static_cast<int32_t>(i);
  return ids;
}

std::vector<TokenType> build_types(const std::vector<int32_t>& raw, size_t n) {
  if (raw.empty()) return std::vector<TokenType>(n, TokenType::kNormal);
  if (raw.size() != n) {
    throw std::invalid_argument("tokenizer: " + std::to_string(raw.size()) + " token types for " +
                                std::to_string(n) + " tokens (give one per token, or none)");
  }
  std::vector<TokenType> types(n);
  for (size_t i = 0; i < n; ++i) {
    if (raw[i] < 0 || raw[i] > static_cast<int32_t>(TokenType::kByte)) {
      throw std::invalid_argument("tokenizer: token " + std::to_string(i) + " has token type " +
                                  std::to_string(raw[i]) + " (allowed 0..6)");
    }
    types[i] = static_cast<TokenType>(raw[i]);
  }
  return types;
}

std::vector<float> build_scores(std::vector<float> scores, size_t n) {
  if (scores.empty()) return std::vector<float>(n, 0.0F);
  if (scores.size() != n) {
    throw std::invalid_argument("tokenizer: " + std::to_string(scores.size()) + " scores for " +
                                std::to_string(n) + " tokens (give one per token, or none)");
  }
  return scores;
}

int32_t checked_special_id(int32_t id, size_t n, const char* what) {
  if (id < -1 || id >= static_cast<int64_t>(n)) {
    throw std::invalid_argument(std::string("tokenizer: ") + what + " " + std::to_string(id) +
                                " is outside the vocabulary of " + std::to_string(n) +
                                " tokens (use -1 for none)");
  }
  return id;
}

bool is_spm(const std::string& model) {
  if (model == "llama") return true;
  if (model == "gpt2") return false;
  throw std::runtime_error("tokenizer.ggml.model: unsupported tokenizer model \"" + model +
                           "\" (supported: \"gpt2\", byte-level BPE; \"llama\", "
                           "SentencePiece-style)");
}

void replace_all(std::string& s, std::string_view from, std::string_view to) {
  for (size_t pos = s.find(from); pos != std::string::npos; pos = s.find(from, pos + to.size())) {
    s.replace(pos, from.size(), to);
  }
}

// llama.cpp token_to_piece(special = true) for one token.
std::string piece_of(const std::string& text, uint32_t attr, bool spm) {
  if ((attr & token_attr::kSpecial) != 0) return text;
  if ((attr & token_attr::kNormal) != 0) {
    if (!spm) return byte_unicode::decode(text);
    std::string out = text;
    replace_all(out, kSpmSpace, " ");
    return out;
  }
  if ((attr & token_attr::kByte) != 0) {
    // "<0xNN>" (llama.cpp token_to_byte reads the two hex digits at offset 3).
    const std::string hex = text.size() >= 5 ? text.substr(3, 2) : std::string();
    return std::string(1, static_cast<char>(std::strtol(hex.c_str(), nullptr, 16)));
  }
  return {};  // unused, undefined
}

}  // namespace

Tokenizer::Tokenizer(TokenizerSpec spec)
    : model_(std::move(spec.model)),
      spm_(is_spm(model_)),
      tokens_(checked_tokens(std::move(spec.tokens))),
      types_(build_types(spec.token_types, tokens_.size())),
      attrs_(plinth::token_attributes(tokens_, spec.token_types, spec.attribute_inputs)),
      scores_(build_scores(spm_ ? std::move(spec.scores) : std::vector<float>{}, tokens_.size())),
      ids_(build_ids(tokens_)),
      partition_(tokens_, attrs_),
      bos_id_(checked_special_id(spec.bos_id, tokens_.size(), "bos_id")),
      eos_id_(checked_special_id(spec.eos_id, tokens_.size(), "eos_id")),
      add_bos_(false) {
  if (spm_) {
    spm_model_.emplace(ids_);
    add_bos_ = spec.add_bos.value_or(true);
    add_space_prefix_ = spec.add_space_prefix.value_or(true);
  } else {
    pre_.emplace(spec.pre);
    bpe_.emplace(ids_, static_cast<int32_t>(tokens_.size()), spec.merges);
    add_bos_ = spec.add_bos.value_or(pre_->default_add_bos());
  }
  bytes_.reserve(tokens_.size());
  for (size_t i = 0; i < tokens_.size(); ++i)
    bytes_.push_back(piece_of(tokens_[i], attrs_[i], spm_));
}

namespace {
TokenizerSpec bpe_spec(std::vector<std::string> tokens, std::vector<int32_t> token_types,
                       std::vector<std::string> merges, std::string pre, int32_t bos_id,
                       int32_t eos_id, bool add_bos) {
  TokenizerSpec s;
  s.model = "gpt2";
  s.tokens = std::move(tokens);
  s.token_types = std::move(token_types);
  s.merges = std::move(merges);
  s.pre = std::move(pre);
  s.bos_id = bos_id;
  s.eos_id = eos_id;
  s.add_bos = add_bos;
  return s;
}
}  // namespace

// The by-value parameters are the agreed API (callers may move in).
// NOLINTBEGIN(performance-unnecessary-value-param)
Tokenizer::Tokenizer(std::vector<std::string> tokens, std::vector<int32_t> token_types,
                     std::vector<std::string> merges, std::string pre, int32_t bos_id,
                     int32_t eos_id, bool add_bos)
    // NOLINTEND(performance-unnecessary-value-param)
    : Tokenizer(bpe_spec(std::move(tokens), std::move(token_types), std::move(merges),
                         std::move(pre), bos_id, eos_id, add_bos)) {}

void Tokenizer::check_id(int32_t id) const {
  if (id < 0 || id >= vocab_size()) {
    throw std::out_of_range("token id " + std::to_string(id) + " is outside the vocabulary [0, " +
                            std::to_string(vocab_size()) + ")");
  }
}

void Tokenizer::encode_bpe_text(std::string_view text, std::vector<int32_t>& out) const {
  for (size_t i = 0; i < text.size(); ++i) {
    const auto b = static_cast<uint8_t>(text[i]);
    if (!bpe_->has_byte_token(b)) {
      char hex[8];
      std::snprintf(hex, sizeof hex, "0x%02X", static_cast<unsigned>(b));
      throw std::invalid_argument(std::string("byte ") + hex + " at offset " + std::to_string(i) +
                                  " has no token in this model's vocabulary; remove or replace it");
    }
  }
  const bool ignore_merges = pre_->ignore_merges();
  for (const std::string_view word : pre_->split(text)) {
    if (ignore_merges) {
      // llama.cpp ignore_merges: a word that is a vocabulary entry is that token.
      if (const auto id = find_token(byte_unicode::encode(word))) {
        out.push_back(*id);
        continue;
      }
    }
    bpe_->encode_word(word, out);
  }
}

void Tokenizer::encode_spm_text(std::string_view text, bool space_prefix,
                                std::vector<int32_t>& out) const {
  std::string escaped = space_prefix ? std::string(" ") : std::string();
  escaped += text;
  replace_all(escaped, " ", kSpmSpace);
  spm_model_->encode(escaped, ids_, scores_, out);
}

void Tokenizer::encode_fragments(const std::vector<Fragment>& fragments,
                                 std::vector<int32_t>& out) const {
  bool prev_special = true;  // llama.cpp: the first text fragment gets the space prefix too
  for (const Fragment& f : fragments) {
    if (f.token >= 0) {
      out.push_back(f.token);
      prev_special = true;
      continue;
    }
    if (spm_) {
      encode_spm_text(f.text, add_space_prefix_ && prev_special, out);
    } else {
      encode_bpe_text(f.text, out);
    }
    prev_special = false;
  }
}

std::vector<int32_t> Tokenizer::encode(std::string_view text, bool add_special) const {
  utf8::validate(text);
  std::vector<Fragment> fragments;
  partition_.split(text, false, fragments);
  std::vector<int32_t> ids;
  ids.reserve(text.size() / 3 + 2);
  if (add_special && add_bos_ && bos_id_ >= 0) ids.push_back(bos_id_);
  encode_fragments(fragments, ids);
  return ids;
}

std::vector<int32_t> Tokenizer::encode_segments(const std::vector<Segment>& segments,
                                                bool add_special) const {
  std::vector<int32_t> ids;
  // A chat template that writes bos_token itself (Llama 2 / 3, Gemma, Mistral) already starts
  // with BOS: it is not doubled.
  const bool starts_with_bos = !segments.empty() && segments.front().special && bos_id_ >= 0 &&
                               find_token(segments.front().text) == bos_id_;
  if (add_special && add_bos_ && bos_id_ >= 0 && !starts_with_bos) ids.push_back(bos_id_);
  std::vector<Fragment> fragments;
  for (size_t i = 0; i < segments.size(); ++i) {
    const Segment& seg = segments[i];
    if (!seg.special) {
      utf8::validate(seg.text);
      partition_.split(seg.text, false, fragments);
      continue;
    }
    const auto id = find_token(seg.text);
    if (!id || !is_special(*id)) {
      throw std::invalid_argument(
          "segment " + std::to_string(i) + ": \"" + seg.text +
          "\" is not the text of a special token of this vocabulary" +
          (id ? " (it is an ordinary token; mark the segment special=false)" : ""));
    }
    fragments.push_back({*id, {}});
  }
  strip_around_special(fragments);
  encode_fragments(fragments, ids);
  return ids;
}

void Tokenizer::strip_around_special(std::vector<Fragment>& fragments) const {
  // As llama.cpp's partition does around a special token it finds in text (Phi-3's RSTRIP):
  // C-locale whitespace after an RSTRIP token / before an LSTRIP one is dropped.
  const auto c_space = [](char c) {
    return c == ' ' || c == '\t' || c == '\n' || c == '\v' || c == '\f' || c == '\r';
  };
  for (size_t i = 0; i < fragments.size(); ++i) {
    if (fragments[i].token < 0) continue;
    const uint32_t a = attrs_[static_cast<size_t>(fragments[i].token)];
    if ((a & token_attr::kRstrip) != 0 && i + 1 < fragments.size() && fragments[i + 1].token < 0) {
      std::string_view& t = fragments[i + 1].text;
      while (!t.empty() && c_space(t.front())) t.remove_prefix(1);
    }
    if ((a & token_attr::kLstrip) != 0 && i > 0 && fragments[i - 1].token < 0) {
      std::string_view& t = fragments[i - 1].text;
      while (!t.empty() && c_space(t.back())) t.remove_suffix(1);
    }
  }
  std::erase_if(fragments, [](const Fragment& f) { return f.token < 0 && f.text.empty(); });
}

std::string Tokenizer::decode(std::span<const int32_t> ids, bool skip_special) const {
  std::string out;
  for (const int32_t id : ids) {
    check_id(id);
    const uint32_t a = attrs_[static_cast<size_t>(id)];
    if (skip_special && (a & (token_attr::kControl | token_attr::kUnknown)) != 0) continue;
    out += bytes_[static_cast<size_t>(id)];
  }
  return out;
}

const std::string& Tokenizer::token_to_bytes(int32_t id) const {
  check_id(id);
  return bytes_[static_cast<size_t>(id)];
}

std::optional<int32_t> Tokenizer::find_token(std::string_view text) const {
  const auto it = ids_.find(text);
  if (it == ids_.end()) return std::nullopt;
  return it->second;
}

const std::string& Tokenizer::pre_tokenizer_name() const {
  static const std::string kNone;
  return pre_ ? pre_->name() : kNone;
}

TokenType Tokenizer::token_type(int32_t id) const {
  check_id(id);
  return types_[static_cast<size_t>(id)];
}

uint32_t Tokenizer::token_attributes(int32_t id) const {
  check_id(id);
  return attrs_[static_cast<size_t>(id)];
}

bool Tokenizer::is_special(int32_t id) const {
  return (token_attributes(id) & token_attr::kSpecial) != 0;
}

}  // namespace plinth
