#include "tokenizer/streaming_detokenizer.hpp"

#include <span>

#include "tokenizer/tokenizer.hpp"
#include "tokenizer/utf8.hpp"

namespace plinth {
namespace {

constexpr char kReplacement[] = "\xEF\xBF\xBD";  // U+FFFD

// Moves the well-formed prefix of `pending` to the result, replacing ill-formed subparts; with
// `final`, a truncated tail is replaced too, else it stays in `pending`.
std::string drain(std::string& pending, bool final) {
  std::string out;
  size_t pos = 0;
  while (pos < pending.size()) {
    const utf8::Seq s = utf8::inspect(pending, pos);
    if (s.status == utf8::SeqStatus::kIncomplete && !final) break;
    if (s.status == utf8::SeqStatus::kComplete) {
      out.append(pending, pos, s.length);
    } else {
      out += kReplacement;
    }
    pos += s.length;
  }
  pending.erase(0, pos);
  return out;
}

}  // namespace

StreamingDetokenizer::StreamingDetokenizer(const Tokenizer& tokenizer, bool skip_special)
    : tokenizer_(&tokenizer), skip_special_(skip_special) {}

std::string StreamingDetokenizer::push(int32_t id) {
  const int32_t one[] = {id};
  pending_ += tokenizer_->decode(std::span<const int32_t>(one), skip_special_);
  return drain(pending_, false);
}

std::string StreamingDetokenizer::flush() {
  return drain(pending_, true);
}

}  // namespace plinth
