// What the engine tests over fake_kv_backend share: the fake model's vocabulary, a tokenizer for
// it, the model descriptor the fake backend accepts, and the reference continuation computed from
// the plain token list (history_model.hpp), which every output is compared with.
#pragma once

#include <algorithm>
#include <string>
#include <vector>

#include "history_model.hpp"
#include "plinth/model.h"
#include "tokenizer/tokenizer.hpp"

namespace plinth::fake_model {

inline constexpr uint32_t kVocab = 64;

/// 64 single-character tokens (printable ASCII maps to itself in GPT-2's byte mapping), no merges.
inline Tokenizer tiny_tokenizer() {
  const std::string chars = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789+-";
  std::vector<std::string> tokens;
  for (char c : chars) tokens.emplace_back(1, c);
  return Tokenizer(tokens, {}, {}, "gpt-2", -1, -1, false);
}

/// The fake model's greedy continuation of `prompt`: max_tokens ids.
inline std::vector<int32_t> expected_output(const std::vector<int32_t>& prompt,
                                            uint32_t max_tokens) {
  std::vector<int32_t> t = prompt;
  for (uint32_t k = 0; k < max_tokens; ++k) {
    const size_t n = std::min<size_t>(t.size(), plinth_test::kHistoryWindow);
    const auto pos = static_cast<uint32_t>(t.size() - 1);
    t.push_back(plinth_test::next_token({t.data() + t.size() - n, n}, pos, kVocab));
  }
  return {t.begin() + static_cast<std::ptrdiff_t>(prompt.size()), t.end()};
}

/// The descriptor fake_kv_backend accepts: 1 layer of width 1, kVocab ids, 4096 positions.
inline plinth_model_desc model_desc() {
  plinth_model_desc d{};
  d.struct_size = sizeof(d);
  d.config.struct_size = sizeof(d.config);
  d.config.architecture = "fake";
  d.config.n_layers = d.config.n_heads = d.config.n_kv_heads = 1;
  d.config.head_dim = d.config.hidden_size = d.config.ffn_size = 1;
  d.config.vocab_size = kVocab;
  d.config.context_length = 4096;
  d.path = "fake";
  return d;
}

}  // namespace plinth::fake_model
