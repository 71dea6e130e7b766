#include "tokenizer/bpe_model.hpp"

#include <cstdio>
#include <queue>
#include <stdexcept>

#include "tokenizer/byte_unicode.hpp"

namespace plinth {

BpeModel::BpeModel(const TokenIdMap& token_ids, int32_t vocab_size,
                   const std::vector<std::string>& merges)
    : vocab_size_(vocab_size) {
  byte_ids_.fill(-1);
  for (int b = 0; b < 256; ++b) {
    const auto it = token_ids.find(byte_unicode::byte_to_utf8(static_cast<uint8_t>(b)));
    if (it != token_ids.end()) byte_ids_[b] = it->second;
  }
  // Texts that merges produce but the vocabulary lacks get internal ids past the vocabulary.
  std::unordered_map<std::string, int32_t> internal;
  const auto symbol_of = [&](const std::string& text) {
    if (const auto it = token_ids.find(text); it != token_ids.end()) return it->second;
    const auto [it, added] =
        internal.emplace(text, vocab_size_ + static_cast<int32_t>(internal_bytes_.size()));
    if (added) internal_bytes_.push_back(byte_unicode::decode(text));
    return it->second;
  };
  merges_.reserve(merges.size());
  for (size_t i = 0; i < merges.size(); ++i) {
    const std::string& m = merges[i];
    // The separator is the first space after the first character (llama.cpp: find(' ', 1)).
    const size_t sp = m.size() > 1 ? m.find(' ', 1) : std::string::npos;
    if (sp == std::string::npos) {
      throw std::runtime_error("tokenizer.ggml.merges[" + std::to_string(i) + "] = \"" + m +
                               "\" is not of the form \"left right\"");
    }
    const std::string left = m.substr(0, sp), right = m.substr(sp + 1);
    const int32_t l = symbol_of(left), r = symbol_of(right);
    const int32_t result = symbol_of(left + right);
    merges_.emplace(pair_key(l, r), Merge{static_cast<int32_t>(i), result});  // first rank wins
  }
}

void BpeModel::emit(int32_t symbol, std::vector<int32_t>& out) const {
  if (symbol < vocab_size_) {
    out.push_back(symbol);
    return;
  }
  for (const char c : internal_bytes_[static_cast<size_t>(symbol - vocab_size_)]) {
    out.push_back(byte_ids_[static_cast<uint8_t>(c)]);
  }
}

void BpeModel::encode_word(std::string_view word, std::vector<int32_t>& out) const {
  struct Symbol {
    int32_t id;  // -1 once merged into its left neighbour
    int32_t prev, next;
  };
  std::vector<Symbol> sym(word.size());
  for (size_t i = 0; i < word.size(); ++i) {
    const auto b = static_cast<uint8_t>(word[i]);
    if (byte_ids_[b] < 0) {
      char hex[8];
      std::snprintf(hex, sizeof hex, "0x%02X", static_cast<unsigned>(b));
      throw std::runtime_error(std::string("tokenizer vocabulary has no token for byte ") + hex +
                               " (byte-level BPE needs all 256 byte tokens)");
    }
    sym[i] = {byte_ids_[b], static_cast<int32_t>(i) - 1,
              i + 1 < word.size() ? static_cast<int32_t>(i) + 1 : -1};
  }
  if (sym.size() == 1) {
    out.push_back(sym[0].id);
    return;
  }

  struct Candidate {
    int32_t rank, left, right, left_id, right_id, result;
  };
  // Lowest rank first; on equal ranks the leftmost pair (llama.cpp llm_bigram_bpe::comparator).
  const auto worse = [](const Candidate& a, const Candidate& b) {
    return a.rank > b.rank || (a.rank == b.rank && a.left > b.left);
  };
  std::priority_queue<Candidate, std::vector<Candidate>, decltype(worse)> queue(worse);
  const auto consider = [&](int32_t left, int32_t right) {
    if (left < 0 || right < 0) return;
    const auto it = merges_.find(pair_key(sym[left].id, sym[right].id));
    if (it == merges_.end()) return;
    queue.push({it->second.rank, left, right, sym[left].id, sym[right].id, it->second.result});
  };
  for (int32_t i = 0; i + 1 < static_cast<int32_t>(sym.size()); ++i) consider(i, i + 1);

  while (!queue.empty()) {
    const Candidate c = queue.top();
    queue.pop();
    Symbol& l = sym[c.left];
    Symbol& r = sym[c.right];
    // Stale when either side has merged since the candidate was queued.
    if (l.id != c.left_id || r.id != c.right_id || l.next != c.right) continue;
    l.id = c.result;
    l.next = r.next;
    if (r.next >= 0) sym[r.next].prev = c.left;
    r.id = -1;
    consider(l.prev, c.left);
    consider(c.left, l.next);
  }
  for (int32_t i = 0; i >= 0; i = sym[i].next) emit(sym[i].id, out);
}

}  // namespace plinth
