#include "engine/forced_memo.hpp"

#include <algorithm>
#include <stdexcept>

namespace plinth {

ForcedTokenMemo::ForcedTokenMemo(size_t max_entries, size_t max_key_bytes, size_t max_tokens)
    : max_entries_(max_entries), max_key_bytes_(max_key_bytes), max_tokens_(max_tokens) {
  if (max_entries == 0 || max_key_bytes == 0 || max_tokens == 0) {
    throw std::invalid_argument("ForcedTokenMemo: every bound must be at least 1");
  }
}

const std::vector<int32_t>* ForcedTokenMemo::find(std::string_view bytes) {
  const auto it = index_.find(bytes);
  if (it == index_.end()) return nullptr;
  lru_.splice(lru_.begin(), lru_, it->second);  // iterators (and the key's storage) stay valid
  return &it->second->second;
}

void ForcedTokenMemo::record(std::string_view bytes, std::span<const int32_t> tokens,
                             std::span<const std::string_view> token_bytes) {
  if (bytes.empty() || tokens.empty() || tokens.size() != token_bytes.size()) return;
  if (bytes.size() > max_key_bytes_ || tokens.size() > max_tokens_) return;
  // ends[i]: the offset in `bytes` where token i ends; the tokens must spell `bytes` and the last
  // one reach its end (no token after it is needed, none before it reaches it).
  std::vector<size_t> ends(tokens.size());
  size_t at = 0;
  for (size_t i = 0; i < tokens.size(); ++i) {
    const std::string_view t = token_bytes[i];
    const size_t inside = std::min(t.size(), bytes.size() - at);
    if (t.empty() || t.substr(0, inside) != bytes.substr(at, inside)) return;
    at += t.size();
    ends[i] = at;
    if (at >= bytes.size() && i + 1 != tokens.size()) return;
  }
  if (at < bytes.size()) return;
  put(bytes, tokens);
  for (size_t i = 0; i + 1 < tokens.size(); ++i) {
    put(bytes.substr(ends[i]), tokens.subspan(i + 1));
  }
}

void ForcedTokenMemo::put(std::string_view key, std::span<const int32_t> tokens) {
  if (const auto it = index_.find(key); it != index_.end()) {
    std::vector<int32_t>& value = it->second->second;
    payload_ = payload_ - value.size() * sizeof(int32_t) + tokens.size() * sizeof(int32_t);
    value.assign(tokens.begin(), tokens.end());
    lru_.splice(lru_.begin(), lru_, it->second);
    return;
  }
  if (index_.size() >= max_entries_) {
    const auto& [old_key, old_value] = lru_.back();
    payload_ -= old_key.size() + old_value.size() * sizeof(int32_t);
    index_.erase(old_key);
    lru_.pop_back();
  }
  lru_.emplace_front(std::string(key), std::vector<int32_t>(tokens.begin(), tokens.end()));
  index_.emplace(lru_.front().first, lru_.begin());
  payload_ += key.size() + tokens.size() * sizeof(int32_t);
}

}  // namespace plinth
