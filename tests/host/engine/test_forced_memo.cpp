// engine/forced_memo: what forced-token drafting remembers of the model's spellings: exact keys,
// the suffixes at token boundaries, the latest spelling winning, spellings that do not spell the
// key ignored, and the bounds (entries, key bytes, tokens; least recently used evicted).
#include <gtest/gtest.h>

#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "engine/forced_memo.hpp"

namespace plinth {
namespace {

using Tokens = std::vector<int32_t>;

// Records `pieces` (token i's bytes) as the spelling of `bytes`, ids 100, 101, ...
void record(ForcedTokenMemo& m, std::string_view bytes, const std::vector<std::string>& pieces) {
  Tokens ids;
  std::vector<std::string_view> views;
  for (size_t i = 0; i < pieces.size(); ++i) {
    ids.push_back(100 + static_cast<int32_t>(i));
    views.push_back(pieces[i]);
  }
  m.record(bytes, ids, views);
}

TEST(ForcedTokenMemo, RemembersTheSpellingAndItsSuffixesAtTokenBoundaries) {
  ForcedTokenMemo m(16, 64, 16);
  EXPECT_EQ(m.find("customer_name\""), nullptr);
  // The last token reaches past the forced bytes (`":` where `"` is forced): allowed.
  record(m, "customer_name\"", {"custom", "er_", "name", "\":"});
  ASSERT_NE(m.find("customer_name\""), nullptr);
  EXPECT_EQ(*m.find("customer_name\""), (Tokens{100, 101, 102, 103}));
  ASSERT_NE(m.find("er_name\""), nullptr);
  EXPECT_EQ(*m.find("er_name\""), (Tokens{101, 102, 103}));
  EXPECT_EQ(*m.find("name\""), (Tokens{102, 103}));
  EXPECT_EQ(*m.find("\""), (Tokens{103}));
  EXPECT_EQ(m.find("ustomer_name\""), nullptr) << "not a token boundary";
  EXPECT_EQ(m.find("customer"), nullptr) << "exact keys only";
  EXPECT_EQ(m.size(), 4u);
  // A later spelling replaces the earlier one.
  record(m, "name\"", {"na", "me\""});
  EXPECT_EQ(*m.find("name\""), (Tokens{100, 101}));
}

TEST(ForcedTokenMemo, IgnoresSpellingsThatDoNotSpellTheBytes) {
  ForcedTokenMemo m(16, 64, 16);
  record(m, "abc", {"ab", "x"});      // departs from the bytes
  record(m, "abc", {"ab"});           // stops short
  record(m, "abc", {"abc", "d"});     // a token after the one that reaches the end
  record(m, "abc", {"a", "", "bc"});  // an empty token
  record(m, "", {"a"});               // nothing forced
  m.record("abc", Tokens{1, 2}, std::vector<std::string_view>{"abc"});  // sizes differ
  EXPECT_EQ(m.size(), 0u);
  EXPECT_EQ(m.payload_bytes(), 0u);
}

TEST(ForcedTokenMemo, StaysWithinItsBoundsEvictingTheLeastRecentlyUsed) {
  ForcedTokenMemo m(3, 8, 2);
  record(m, "123456789", {"123456789"});  // key over 8 bytes
  record(m, "abc", {"a", "b", "c"});      // 3 tokens over 2
  EXPECT_EQ(m.size(), 0u);
  record(m, "k1", {"k1"});
  record(m, "k2", {"k2"});
  record(m, "k3", {"k3"});
  ASSERT_NE(m.find("k1"), nullptr);  // k1 used: k2 is now the least recently used
  record(m, "k4", {"k4"});
  EXPECT_EQ(m.size(), 3u);
  EXPECT_EQ(m.find("k2"), nullptr);
  EXPECT_NE(m.find("k1"), nullptr);
  EXPECT_NE(m.find("k3"), nullptr);
  EXPECT_NE(m.find("k4"), nullptr);
  EXPECT_EQ(m.payload_bytes(), 3 * (2 + sizeof(int32_t)));
  // Many more strings: the size and payload stay bounded.
  for (int i = 0; i < 1000; ++i) {
    const std::string digits = std::to_string(i);
    std::string key(1, 's');
    key.append(digits);
    record(m, key, {"s", digits});
  }
  EXPECT_EQ(m.size(), 3u);
  EXPECT_LE(m.payload_bytes(), 3 * (8 + 2 * sizeof(int32_t)));
  EXPECT_NE(m.find("s999"), nullptr);
  EXPECT_THROW(ForcedTokenMemo(0, 1, 1), std::invalid_argument);
}

}  // namespace
}  // namespace plinth
