// ngram_propose: prompt lookup — the longest suffix n-gram (max_n down to min_n) whose most recent
// earlier occurrence is followed by tokens proposes up to k of them.
#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "ngram_proposer.hpp"

using plinth::spec_decode::ngram_propose;

namespace {
using Tokens = std::vector<int32_t>;

Tokens propose(const Tokens& t, uint32_t min_n, uint32_t max_n, uint32_t k) {
  return ngram_propose(t, min_n, max_n, k);
}
}  // namespace

TEST(NgramProposer, MostRecentEarlierOccurrenceWins) {
  //                 0  1  2  3  4  5  6  7  8  9 10 11
  const Tokens t{1, 2, 3, 9, 1, 2, 3, 8, 5, 1, 2, 3};
  // [1 2 3] occurs at 0 (followed by 9) and at 4 (followed by 8 5): the later one proposes.
  EXPECT_EQ(propose(t, 3, 3, 2), (Tokens{8, 5}));
  EXPECT_EQ(propose(t, 3, 3, 8), (Tokens{8, 5, 1, 2, 3}));
  EXPECT_EQ(propose(t, 1, 1, 1), (Tokens{8}));  // [3] most recent at 6
}

TEST(NgramProposer, LongestNgramFirst) {
  //                 0  1  2  3  4  5  6  7  8  9 10 11
  const Tokens t{7, 1, 2, 40, 3, 1, 2, 50, 6, 7, 1, 2};
  // The 3-gram [7 1 2] matches at 0 only (-> 40); the 2-gram [1 2] matches more recently at 5
  // (-> 50); [2] alone at 6. Longest first: max_n decides.
  EXPECT_EQ(propose(t, 1, 3, 2), (Tokens{40, 3}));
  EXPECT_EQ(propose(t, 1, 2, 2), (Tokens{50, 6}));
  EXPECT_EQ(propose(t, 2, 2, 2), (Tokens{50, 6}));
  EXPECT_EQ(propose(t, 1, 1, 2), (Tokens{50, 6}));
  // max_n larger than any match: falls back to the longest that matches.
  EXPECT_EQ(propose(t, 1, 8, 1), (Tokens{40}));
  // min_n above the longest match: nothing.
  EXPECT_EQ(propose(t, 4, 8, 2), Tokens{});
}

TEST(NgramProposer, NothingWithoutAMatch) {
  EXPECT_EQ(propose({1, 2, 3, 4, 5}, 1, 4, 4), Tokens{});
  EXPECT_EQ(propose({}, 1, 4, 4), Tokens{});
  EXPECT_EQ(propose({7}, 1, 4, 4), Tokens{});
  // The suffix itself does not count as an earlier occurrence.
  EXPECT_EQ(propose({5, 6, 7}, 3, 3, 2), Tokens{});
}

TEST(NgramProposer, KClampsTheProposal) {
  const Tokens t{1, 2, 3, 4, 5, 6, 7, 8, 1, 2};
  EXPECT_EQ(propose(t, 2, 2, 3), (Tokens{3, 4, 5}));
  EXPECT_EQ(propose(t, 2, 2, 1), (Tokens{3}));
  EXPECT_EQ(propose(t, 2, 2, 0), Tokens{});
  EXPECT_EQ(propose(t, 2, 2, 16), (Tokens{3, 4, 5, 6, 7, 8, 1, 2}));
}

TEST(NgramProposer, MatchNearTheEndProposesFewer) {
  // [1 2] at 3 leaves only 4 (and the suffix) after it: fewer than k.
  EXPECT_EQ(propose({9, 9, 9, 1, 2, 4, 1, 2}, 2, 2, 5), (Tokens{4, 1, 2}));
  // Overlapping repeats: [5 5] at 0 (an earlier start precedes the suffix's, 1) leaves one token.
  EXPECT_EQ(propose({5, 5, 5}, 2, 2, 4), (Tokens{5}));
  EXPECT_EQ(propose({1, 2, 1, 2}, 2, 2, 4), (Tokens{1, 2}));
}

TEST(NgramProposer, MinNLongerThanTheSequence) {
  EXPECT_EQ(propose({1, 1}, 3, 4, 4), Tokens{});
  EXPECT_EQ(propose({1, 1, 1}, 3, 4, 4), Tokens{});  // a 3-gram needs an earlier start
  EXPECT_EQ(propose({1, 1, 1, 1}, 3, 4, 4), (Tokens{1}));
}
