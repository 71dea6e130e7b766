// Stop strings: 1-4 stop strings and a stream of deltas from the input, through StopStringMatcher
// (checked against a brute-force search of the whole text: the stop that ends first, then the one
// that starts first, and nothing of it emitted) and through StopChecker with stop token ids, EOS
// and max_tokens.
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "fuzz_support.hpp"
#include "fuzz_targets.hpp"
#include "sampling/stop_checker.hpp"
#include "sampling/stop_string_matcher.hpp"

namespace plinth::fuzz {
namespace {

// Where the output must end: the start of the earliest-ending (then earliest-starting) stop.
std::optional<size_t> first_stop(const std::string& text, const std::vector<std::string>& stops) {
  for (size_t end = 1; end <= text.size(); ++end) {
    std::optional<size_t> start;
    for (const std::string& s : stops) {
      if (s.size() <= end && text.compare(end - s.size(), s.size(), s) == 0) {
        start = std::min(start.value_or(end), end - s.size());
      }
    }
    if (start) return start;
  }
  return std::nullopt;
}

void check_matcher(const std::vector<std::string>& stops, const std::vector<std::string>& deltas) {
  StopStringMatcher m(stops);
  std::string text, emitted;
  size_t max_len = 0;
  for (const auto& s : stops) max_len = std::max(max_len, s.size());
  bool stopped = false;
  for (const std::string& d : deltas) {
    text += d;
    const StopStringMatcher::Result r = m.feed(d);
    emitted += r.text;
    if (r.stopped) {
      crash_if(!r.stop_index || *r.stop_index >= stops.size(), "stopped without a valid index");
      stopped = true;
      break;
    }
    crash_if(m.held() >= std::max<size_t>(max_len, 1), "held back a whole stop string or more");
  }
  const std::optional<size_t> expect = first_stop(text, stops);
  if (!stopped) {
    crash_if(expect.has_value(), "a stop string in the text was missed");
    emitted += m.flush();
    crash_if(emitted != text, "without a stop, the output is not the whole text");
  } else {
    crash_if(!expect.has_value(), "stopped on text that holds no stop string");
    crash_if(emitted != text.substr(0, *expect), "output does not end right before the stop");
    crash_if(!m.feed("x").stopped, "a finished matcher took more text");
  }
}

void check_checker(const std::vector<std::string>& stops, const std::vector<std::string>& deltas,
                   uint8_t control) {
  SamplingParams p;
  p.max_tokens = 1 + control % 32;
  p.ignore_eos = (control & 0x20) != 0;
  p.stop = stops;
  p.stop_token_ids = {7};
  StopChecker c(p, {2});
  for (size_t i = 0; i < deltas.size(); ++i) {
    const int32_t token = deltas[i].empty() ? 0 : static_cast<uint8_t>(deltas[i][0]) % 16;
    const StopChecker::Step s = c.on_token(token, deltas[i]);
    crash_if(c.num_generated() > p.max_tokens, "generated past max_tokens");
    if (token == 7 || (token == 2 && !p.ignore_eos)) {
      crash_if(s.finish != FinishReason::kStop || s.stop_token != token, "stop token not honoured");
    }
    if (s.finish != FinishReason::kNone) {
      try {
        (void)c.on_token(0, "");
        crash_if(true, "on_token after the finish did not throw");
      } catch (const std::logic_error&) {
      }
      return;
    }
  }
}

}  // namespace

void fuzz_stop_strings(const uint8_t* data, size_t size) {
  ByteReader in(data, size);
  const uint8_t control = in.byte();
  const size_t n_stops = 1 + control % 4;
  std::vector<std::string> stops;
  for (size_t i = 0; i < n_stops; ++i) {
    std::string s = in.bytes(1 + in.byte() % 8);
    if (s.empty()) s.push_back('x');  // input ended: a stop must not be empty
    stops.push_back(std::move(s));
  }
  std::vector<std::string> deltas;
  while (!in.empty() && deltas.size() < 256) deltas.push_back(in.bytes(in.byte() % 12));
  check_matcher(stops, deltas);
  check_checker(stops, deltas, static_cast<uint8_t>(control >> 2));
}

}  // namespace plinth::fuzz

PLINTH_FUZZ_ENTRY(plinth::fuzz::fuzz_stop_strings)
