#include "tokenizer/tokenizer.hpp"

#include <cstdio>
#include <stdexcept>
#include <utility>

#include "tokenizer/byte_unicode.hpp"

namespace plinth {
namespace {

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

bool is_verbatim(TokenType t) {
  return t == TokenType::kControl || t == TokenType::kUnknown || t == TokenType::kUserDefined;
}

int32_t checked_special_id(int32_t id, size_t n, const char* what) {
  if (id < -1 || id >= static_cast<int64_t>(n)) {
    throw std::invalid_argument(std::string("tokenizer: ") + what + " " + std::to_string(id) +
                                " is outside the vocabulary of " + std::to_string(n) +
                                " tokens (use -1 for none)");
  }
  return id;
}

}  // namespace

// The by-value parameters are the agreed API (callers may move in); only `tokens` is kept.
// NOLINTBEGIN(performance-unnecessary-value-param)
Tokenizer::Tokenizer(std::vector<std::string> tokens,
                     // cppcheck-suppress passedByValue
                     std::vector<int32_t> token_types,
                     // cppcheck-suppress passedByValue
                     std::vector<std::string> merges,
                     // cppcheck-suppress passedByValue
                     std::string pre, int32_t bos_id, int32_t eos_id, bool add_bos)
    // NOLINTEND(performance-unnecessary-value-param)
    : tokens_(std::move(tokens)),
      types_(build_types(token_types, tokens_.size())),
      ids_(build_ids(tokens_)),
      pre_(pre),
      bpe_(ids_, static_cast<int32_t>(tokens_.size()), merges),
      bos_id_(checked_special_id(bos_id, tokens_.size(), "bos_id")),
      eos_id_(checked_special_id(eos_id, tokens_.size(), "eos_id")),
      add_bos_(add_bos) {
  if (tokens_.empty()) throw std::invalid_argument("tokenizer: empty vocabulary");
  bytes_.reserve(tokens_.size());
  for (size_t i = 0; i < tokens_.size(); ++i) {
    bytes_.push_back(is_verbatim(types_[i]) ? tokens_[i] : byte_unicode::decode(tokens_[i]));
  }
}

void Tokenizer::check_id(int32_t id) const {
  if (id < 0 || id >= vocab_size()) {
    throw std::out_of_range("token id " + std::to_string(id) + " is outside the vocabulary [0, " +
                            std::to_string(vocab_size()) + ")");
  }
}

std::vector<int32_t> Tokenizer::encode(std::string_view text, bool add_special) const {
  utf8::validate(text);
  for (size_t i = 0; i < text.size(); ++i) {
    const auto b = static_cast<uint8_t>(text[i]);
    if (!bpe_.has_byte_token(b)) {
      char hex[8];
      std::snprintf(hex, sizeof hex, "0x%02X", static_cast<unsigned>(b));
      throw std::invalid_argument(std::string("byte ") + hex + " at offset " + std::to_string(i) +
                                  " has no token in this model's vocabulary; remove or replace it");
    }
  }
  std::vector<int32_t> ids;
  ids.reserve(text.size() / 3 + 2);
  if (add_special && add_bos_ && bos_id_ >= 0) ids.push_back(bos_id_);
  for (const std::string_view word : pre_.split(text)) bpe_.encode_word(word, ids);
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
  for (size_t i = 0; i < segments.size(); ++i) {
    const Segment& seg = segments[i];
    if (!seg.special) {
      const auto part = encode(seg.text, false);
      ids.insert(ids.end(), part.begin(), part.end());
      continue;
    }
    const auto id = find_token(seg.text);
    if (!id || !is_special(*id)) {
      throw std::invalid_argument(
          "segment " + std::to_string(i) + ": \"" + seg.text +
          "\" is not the text of a special token of this vocabulary" +
          (id ? " (it is an ordinary token; mark the segment special=false)" : ""));
    }
    ids.push_back(*id);
  }
  return ids;
}

std::string Tokenizer::decode(std::span<const int32_t> ids, bool skip_special) const {
  std::string out;
  for (const int32_t id : ids) {
    check_id(id);
    const TokenType t = types_[static_cast<size_t>(id)];
    if (skip_special && (t == TokenType::kControl || t == TokenType::kUnknown)) continue;
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

TokenType Tokenizer::token_type(int32_t id) const {
  check_id(id);
  return types_[static_cast<size_t>(id)];
}

bool Tokenizer::is_special(int32_t id) const {
  return is_verbatim(token_type(id));
}

}  // namespace plinth
