// Tokenizer: the input as text (encode; valid UTF-8 must round-trip through decode), as text
// segments (encode_segments), and as token ids, two bytes each (decode and the streaming
// detokenizer, whose output must be valid UTF-8 and, when the ids' bytes are valid UTF-8, equal
// decode()).
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "fuzz_support.hpp"
#include "fuzz_targets.hpp"
#include "tokenizer/streaming_detokenizer.hpp"
#include "tokenizer/token_attributes.hpp"
#include "tokenizer/utf8.hpp"

namespace plinth::fuzz {
namespace {

bool valid_utf8(std::string_view s) {
  try {
    utf8::validate(s);
    return true;
  } catch (const InvalidUtf8Error&) {
    return false;
  }
}

void check_text(const Tokenizer& tok, std::string_view text) {
  std::vector<int32_t> ids;
  try {
    ids = tok.encode(text, false);
  } catch (const InvalidUtf8Error&) {
    crash_if(valid_utf8(text), "valid UTF-8 refused by encode");
    return;
  } catch (const std::invalid_argument&) {
    return;  // a byte without a token (named with its offset)
  }
  crash_if(tok.decode(ids) != text, "decode(encode(text)) != text");
  // A user-defined token's text becomes that token (as in llama.cpp); control and unknown
  // tokens never come from text.
  for (const int32_t id : ids) {
    crash_if((tok.token_attributes(id) & (token_attr::kControl | token_attr::kUnknown)) != 0,
             "encode produced a control token");
  }
}

void check_segments(const Tokenizer& tok, std::string_view text) {
  // Pieces split at 0x00; a piece starting with 0x01 is "special" (its rest must be a special
  // token's text).
  std::vector<Tokenizer::Segment> segments;
  size_t start = 0;
  while (start <= text.size() && segments.size() < 16) {
    size_t end = text.find('\0', start);
    if (end == std::string_view::npos) end = text.size();
    std::string_view piece = text.substr(start, end - start);
    const bool special = !piece.empty() && piece[0] == '\x01';
    if (special) piece.remove_prefix(1);
    segments.push_back({std::string(piece), special});
    start = end + 1;
  }
  try {
    (void)tok.encode_segments(segments, true);
  } catch (const std::invalid_argument&) {  // InvalidUtf8Error included
  }
}

void check_ids(const Tokenizer& tok, const uint8_t* data, size_t size, bool skip_special) {
  ByteReader in(data, size);
  std::vector<int32_t> ids;
  while (in.remaining() >= 2 && ids.size() < 512) {
    // Mostly in range, sometimes just outside or negative.
    const uint16_t v = in.u16();
    int32_t id = v % (tok.vocab_size() + 2);
    if (v >= 0xfff0) id = -1 - (v & 0xf);
    ids.push_back(id);
  }
  std::string decoded;
  bool out_of_range = false;
  try {
    decoded = tok.decode(ids, skip_special);
  } catch (const std::out_of_range&) {
    out_of_range = true;
  }
  StreamingDetokenizer detok(tok, skip_special);
  std::string streamed;
  for (const int32_t id : ids) {
    try {
      const std::string piece = detok.push(id);
      crash_if(!valid_utf8(piece), "the detokenizer streamed invalid UTF-8");
      crash_if(detok.pending_bytes() > 3, "more than 3 bytes held back");
      streamed += piece;
    } catch (const std::out_of_range&) {
      crash_if(!out_of_range, "push refused an id decode accepted");
      return;
    }
  }
  crash_if(out_of_range, "decode refused an id push accepted");
  const std::string tail = detok.flush();
  crash_if(!valid_utf8(tail), "flush returned invalid UTF-8");
  streamed += tail;
  crash_if(detok.pending_bytes() != 0, "bytes held back after flush");
  if (valid_utf8(decoded)) crash_if(streamed != decoded, "streamed text != decode()");
}

}  // namespace

void fuzz_tokenizer(const uint8_t* data, size_t size) {
  const Tokenizer& tok = *shared_model().tokenizer;
  if (size > 4096) return;  // BPE is quadratic in a word's length; keep executions fast
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  check_text(tok, text);
  check_segments(tok, text);
  check_ids(tok, data, size, size > 0 && data[0] % 2 == 1);
}

}  // namespace plinth::fuzz

PLINTH_FUZZ_ENTRY(plinth::fuzz::fuzz_tokenizer)
