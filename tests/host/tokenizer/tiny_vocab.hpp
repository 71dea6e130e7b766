#pragma once
// A hand-made byte-level BPE vocabulary for unit tests: the 256 byte tokens (ids 0..255 in byte
// order), two control tokens, then the results of a few merges.

#include <string>
#include <vector>

#include "tokenizer/byte_unicode.hpp"
#include "tokenizer/tokenizer.hpp"

namespace plinth::test {

inline constexpr int32_t kImStart = 256;
inline constexpr int32_t kImEnd = 257;

struct TinyVocab {
  std::vector<std::string> tokens;
  std::vector<int32_t> types;
  std::vector<std::string> merges;
};

/// Merges in rank order; every result is added to the vocabulary except "x y" (whose result
/// "xy" is deliberately missing, to exercise the byte fallback).
inline TinyVocab tiny_vocab() {
  TinyVocab v;
  for (int b = 0; b < 256; ++b) {
    v.tokens.push_back(byte_unicode::byte_to_utf8(static_cast<uint8_t>(b)));
    v.types.push_back(1);
  }
  v.tokens.push_back("<|im_start|>");
  v.types.push_back(3);
  v.tokens.push_back("<|im_end|>");
  v.types.push_back(3);
  v.merges = {"h e",     "l l", "he ll", "hell o", "Ġ w", "o r", "Ġw or", "Ġwor l",
              "Ġworl d", "b c", "a b",   "a a",    "x y", "< |", "Ġ Ġ"};
  for (const auto& m : v.merges) {
    const auto sp = m.find(' ');
    std::string merged = m.substr(0, sp) + m.substr(sp + 1);
    if (merged == "xy") continue;
    v.tokens.push_back(merged);
    v.types.push_back(1);
  }
  return v;
}

inline Tokenizer tiny_tokenizer(bool add_bos = false, std::string pre = "smollm") {
  TinyVocab v = tiny_vocab();
  return Tokenizer(v.tokens, v.types, v.merges, std::move(pre), kImStart, kImEnd, add_bos);
}

}  // namespace plinth::test
