#include "tokenizer/special_partition.hpp"

#include <algorithm>

#include "tokenizer/token_attributes.hpp"

namespace plinth {
namespace {

// C's isspace() in the "C" locale, which llama.cpp's strip loops use.
bool c_space(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\v' || c == '\f' || c == '\r';
}

}  // namespace

SpecialPartition::SpecialPartition(const std::vector<std::string>& tokens,
                                   const std::vector<uint32_t>& attrs) {
  for (size_t i = 0; i < tokens.size() && i < attrs.size(); ++i) {
    const uint32_t a = attrs[i];
    if ((a & token_attr::kSpecial) == 0 || tokens[i].empty()) continue;
    candidates_.push_back({static_cast<int32_t>(i), tokens[i],
                           (a & (token_attr::kControl | token_attr::kUnknown)) != 0,
                           (a & token_attr::kLstrip) != 0, (a & token_attr::kRstrip) != 0});
  }
  std::stable_sort(
      candidates_.begin(), candidates_.end(),
      [](const Candidate& a, const Candidate& b) { return a.text.size() > b.text.size(); });
}

namespace {

// Splits every text fragment of `frags` at the occurrences of `c` (llama.cpp
// tokenizer_st_partition for one special token); returns whether any occurred.
template <typename Candidate>
bool split_at(const Candidate& c, const std::vector<Fragment>& frags, std::vector<Fragment>& next) {
  bool found = false;
  for (const Fragment& f : frags) {
    if (f.token >= 0) {
      next.push_back(f);
      continue;
    }
    std::string_view rest = f.text;
    while (!rest.empty()) {
      const size_t at = rest.find(c.text);
      if (at == std::string_view::npos) {
        next.push_back({-1, rest});
        break;
      }
      found = true;
      std::string_view left = rest.substr(0, at);
      while (c.lstrip && !left.empty() && c_space(left.back())) left.remove_suffix(1);
      if (!left.empty()) next.push_back({-1, left});
      next.push_back({c.id, {}});
      rest.remove_prefix(at + c.text.size());
      while (c.rstrip && !rest.empty() && c_space(rest.front())) rest.remove_prefix(1);
    }
  }
  return found;
}

}  // namespace

void SpecialPartition::split(std::string_view text, bool parse_special,
                             std::vector<Fragment>& out) const {
  std::vector<Fragment> frags;
  if (!text.empty()) frags.push_back({-1, text});
  std::vector<Fragment> next;
  for (const Candidate& c : candidates_) {
    if (!parse_special && c.control_or_unknown) continue;
    next.clear();
    if (split_at(c, frags, next)) std::swap(frags, next);
  }
  out.insert(out.end(), frags.begin(), frags.end());
}

}  // namespace plinth
