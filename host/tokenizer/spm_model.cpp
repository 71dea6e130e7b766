#include "tokenizer/spm_model.hpp"

#include <cstdio>
#include <map>
#include <queue>
#include <stdexcept>
#include <string>
#include <utility>

namespace plinth {
namespace {

// Length of the UTF-8 sequence a lead byte starts (llama.cpp unicode_len_utf8).
size_t utf8_len(char c) {
  static constexpr size_t kLen[] = {1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 2, 2, 3, 4};
  return kLen[static_cast<uint8_t>(c) >> 4];
}

}  // namespace

SpmModel::SpmModel(const TokenIdMap& token_ids) {
  byte_ids_.fill(-1);
  for (int b = 0; b < 256; ++b) {
    char hex[8];
    std::snprintf(hex, sizeof hex, "<0x%02X>", static_cast<unsigned>(b));
    auto it = token_ids.find(std::string_view(hex));
    if (it == token_ids.end()) it = token_ids.find(std::string(1, static_cast<char>(b)));
    if (it != token_ids.end()) byte_ids_[b] = it->second;
  }
}

void SpmModel::encode(std::string_view text, const TokenIdMap& token_ids,
                      const std::vector<float>& scores, std::vector<int32_t>& out) const {
  struct Symbol {
    int prev, next;
    size_t begin, n;  // bytes of `text`; n = 0 once merged into the left neighbour
  };
  struct Bigram {
    int left, right;
    float score;
    size_t size;
  };
  // Highest score first; on equal scores the leftmost (llama.cpp llm_bigram_spm::comparator).
  const auto worse = [](const Bigram& a, const Bigram& b) {
    return a.score < b.score || (a.score == b.score && a.left > b.left);
  };
  std::vector<Symbol> sym;
  for (size_t off = 0; off < text.size();) {
    const size_t n = std::min(utf8_len(text[off]), text.size() - off);
    const int index = static_cast<int>(sym.size());
    sym.push_back({index - 1, off + n == text.size() ? -1 : index + 1, off, n});
    off += n;
  }
  std::priority_queue<Bigram, std::vector<Bigram>, decltype(worse)> queue(worse);
  std::map<std::string_view, std::pair<int, int>> rev_merge;  // merged text -> its two parts
  const auto try_add = [&](int left, int right) {
    if (left == -1 || right == -1) return;
    const std::string_view s = text.substr(sym[left].begin, sym[left].n + sym[right].n);
    const auto it = token_ids.find(s);
    if (it == token_ids.end()) return;
    queue.push({left, right, scores[static_cast<size_t>(it->second)], s.size()});
    rev_merge[s] = {left, right};
  };
  for (int i = 1; i < static_cast<int>(sym.size()); ++i) try_add(i - 1, i);

  while (!queue.empty()) {
    const Bigram b = queue.top();
    queue.pop();
    Symbol& l = sym[b.left];
    Symbol& r = sym[b.right];
    if (l.n == 0 || r.n == 0 || l.n + r.n != b.size) continue;  // a side merged since
    l.n += r.n;
    r.n = 0;
    l.next = r.next;
    if (r.next >= 0) sym[r.next].prev = b.left;
    try_add(l.prev, b.left);
    try_add(b.left, l.next);
  }

  // A final piece: its token, else the two pieces it was merged from, else its bytes.
  const auto resegment = [&](const auto& self, int i) -> void {
    const std::string_view s = text.substr(sym[i].begin, sym[i].n);
    if (const auto it = token_ids.find(s); it != token_ids.end()) {
      out.push_back(it->second);
      return;
    }
    if (const auto m = rev_merge.find(s); m != rev_merge.end()) {
      self(self, m->second.first);
      self(self, m->second.second);
      return;
    }
    for (size_t j = 0; j < s.size(); ++j) {
      const auto byte = static_cast<uint8_t>(s[j]);
      if (byte_ids_[byte] < 0) {
        char hex[8];
        std::snprintf(hex, sizeof hex, "0x%02X", static_cast<unsigned>(byte));
        throw std::invalid_argument(std::string("byte ") + hex +
                                    " has no byte-fallback token (<0x..>) in this model's "
                                    "vocabulary; remove or replace it");
      }
      out.push_back(byte_ids_[byte]);
    }
  };
  if (sym.empty()) return;
  for (int i = 0; i != -1; i = sym[i].next) resegment(resegment, i);
}

}  // namespace plinth
