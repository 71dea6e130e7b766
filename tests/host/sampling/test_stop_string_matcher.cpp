// StopStringMatcher: stops split across deltas, several stops, overlapping prefixes, a stop at the
// very beginning, no false positives, and independence from how the text is cut.
#include <gtest/gtest.h>

#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "sampling/stop_string_matcher.hpp"

namespace plinth {
namespace {

struct Outcome {
  std::string text;  // everything emitted, plus flush() when no stop matched
  bool stopped = false;
  std::optional<size_t> index;
  bool operator==(const Outcome&) const = default;
};

Outcome run(const std::vector<std::string>& stops, const std::vector<std::string>& deltas) {
  StopStringMatcher m(stops);
  Outcome o;
  for (const auto& d : deltas) {
    auto r = m.feed(d);
    o.text += r.text;
    if (r.stopped) {
      o.stopped = true;
      o.index = r.stop_index;
      break;
    }
  }
  if (!o.stopped) o.text += m.flush();
  return o;
}

/// Reference: the stop whose first occurrence ends earliest (then starts earliest) over the whole
/// text.
Outcome brute_force(const std::vector<std::string>& stops, const std::string& text) {
  for (size_t end = 1; end <= text.size(); ++end) {
    for (size_t start = 0; start < end; ++start) {
      for (size_t i = 0; i < stops.size(); ++i) {
        if (text.compare(start, end - start, stops[i]) == 0)
          return {text.substr(0, start), true, i};
      }
    }
  }
  return {text, false, std::nullopt};
}

TEST(StopStringMatcher, StopSpanningTwoDeltas) {
  EXPECT_EQ(run({"STOP"}, {"hello ST", "OP world"}), (Outcome{"hello ", true, 0}));
}

TEST(StopStringMatcher, StopSpanningThreeDeltas) {
  EXPECT_EQ(run({"<|end|>"}, {"ab<", "|e", "nd|>xyz"}), (Outcome{"ab", true, 0}));
  EXPECT_EQ(run({"\n\nUser:"}, {"Sure.\n", "\nUs", "er: hi"}), (Outcome{"Sure.", true, 0}));
}

TEST(StopStringMatcher, HoldsBackOnlyPossiblePrefixes) {
  StopStringMatcher m({"STOP"});
  auto r = m.feed("hello ST");
  EXPECT_EQ(r.text, "hello ");
  EXPECT_FALSE(r.stopped);
  EXPECT_EQ(m.held(), 2u);
  r = m.feed("AR");  // "STAR" cannot start STOP any more
  EXPECT_EQ(r.text, "STAR");
  EXPECT_EQ(m.held(), 0u);
  r = m.feed("S");
  EXPECT_EQ(r.text, "");
  EXPECT_EQ(m.flush(), "S");
}

TEST(StopStringMatcher, MultipleStopsFirstToCompleteWins) {
  EXPECT_EQ(run({"###", "\n\n"}, {"a\n", "\nb###"}), (Outcome{"a", true, 1}));
  EXPECT_EQ(run({"###", "\n\n"}, {"a##", "#\n\n"}), (Outcome{"a", true, 0}));
  // "b" completes before "abc" could: the same answer however the text is cut.
  EXPECT_EQ(run({"abc", "b"}, {"abc"}), (Outcome{"a", true, 1}));
  EXPECT_EQ(run({"abc", "b"}, {"a", "b", "c"}), (Outcome{"a", true, 1}));
  // Same end: the longer (earlier-starting) one.
  EXPECT_EQ(run({"bc", "abc"}, {"xab", "c"}), (Outcome{"x", true, 1}));
}

TEST(StopStringMatcher, OverlappingPrefixes) {
  EXPECT_EQ(run({"aab"}, {"a", "a", "a", "b"}), (Outcome{"a", true, 0}));
  EXPECT_EQ(run({"abcd", "bce"}, {"ab", "ce"}), (Outcome{"a", true, 1}));
  EXPECT_EQ(run({"abab"}, {"aba", "bab"}), (Outcome{"", true, 0}));
  EXPECT_EQ(run({"abab"}, {"ab", "aab", "ab"}), (Outcome{"aba", true, 0}));
}

TEST(StopStringMatcher, StopAtTheVeryBeginning) {
  EXPECT_EQ(run({"</s>"}, {"</s>rest"}), (Outcome{"", true, 0}));
  EXPECT_EQ(run({"</s>"}, {"</", "s>"}), (Outcome{"", true, 0}));
}

TEST(StopStringMatcher, NoFalsePositives) {
  EXPECT_EQ(run({"STOP"}, {"ST", "OX", " STO", "RY S", "TOp"}),
            (Outcome{"STOX STORY STOp", false, std::nullopt}));
  EXPECT_EQ(run({"\n\n"}, {"a\n", "b\n", "c"}), (Outcome{"a\nb\nc", false, std::nullopt}));
  EXPECT_EQ(run({}, {"anything", " goes"}), (Outcome{"anything goes", false, std::nullopt}));
}

TEST(StopStringMatcher, Utf8StopsAcrossDeltas) {
  EXPECT_EQ(run({"。\n"}, {"你好", "。", "\n再见"}), (Outcome{"你好", true, 0}));
}

TEST(StopStringMatcher, AfterStopEverythingIsSwallowed) {
  StopStringMatcher m({"x"});
  EXPECT_TRUE(m.feed("axb").stopped);
  const auto r = m.feed("more");
  EXPECT_TRUE(r.stopped);
  EXPECT_EQ(r.text, "");
  EXPECT_EQ(m.flush(), "");
}

TEST(StopStringMatcher, RejectsEmptyStop) {
  EXPECT_THROW(StopStringMatcher({"a", ""}), std::invalid_argument);
}

TEST(StopStringMatcher, IndependentOfChunkingAndEqualToBruteForce) {
  std::mt19937 gen(99);
  const std::vector<std::string> stops{"abc", "bca", "cc", "aaab"};
  for (int trial = 0; trial < 2000; ++trial) {
    std::string text;
    const int len = static_cast<int>(gen() % 16);
    for (int i = 0; i < len; ++i) text.push_back(static_cast<char>('a' + gen() % 3));
    const Outcome expected = brute_force(stops, text);
    EXPECT_EQ(run(stops, {text}), expected) << text;
    std::vector<std::string> bytes, random_cut;
    for (char c : text) bytes.emplace_back(1, c);
    for (size_t i = 0; i < text.size();) {
      const size_t n = 1 + gen() % 4;
      random_cut.push_back(text.substr(i, n));
      i += n;
    }
    EXPECT_EQ(run(stops, bytes), expected) << text;
    EXPECT_EQ(run(stops, random_cut), expected) << text;
  }
}

}  // namespace
}  // namespace plinth
