#include "tokenizer/utf8.hpp"

#include <cstdio>

namespace plinth {
namespace {

std::string hex_bytes(std::string_view text, size_t pos, size_t n) {
  std::string out;
  for (size_t i = pos; i < text.size() && i < pos + n; ++i) {
    char buf[8];
    std::snprintf(buf, sizeof buf, "%s0x%02X", out.empty() ? "" : " ",
                  static_cast<unsigned>(static_cast<unsigned char>(text[i])));
    out += buf;
  }
  return out;
}

}  // namespace

InvalidUtf8Error::InvalidUtf8Error(size_t offset, const std::string& detail)
    : std::invalid_argument("invalid UTF-8 at byte offset " + std::to_string(offset) + ": " +
                            detail + " (pass well-formed UTF-8 text)"),
      offset_(offset) {}

namespace utf8 {

Seq inspect(std::string_view text, size_t pos) {
  const auto byte = [&](size_t i) { return static_cast<unsigned char>(text[i]); };
  const unsigned char b0 = byte(pos);
  if (b0 < 0x80) return {SeqStatus::kComplete, 1, b0};
  size_t need;
  char32_t cp;
  // Allowed range of the second byte (Unicode table 3-7) rules out overlongs and surrogates.
  unsigned char lo = 0x80, hi = 0xBF;
  if (b0 >= 0xC2 && b0 <= 0xDF) {
    need = 2;
    cp = b0 & 0x1F;
  } else if (b0 >= 0xE0 && b0 <= 0xEF) {
    need = 3;
    cp = b0 & 0x0F;
    if (b0 == 0xE0) lo = 0xA0;
    if (b0 == 0xED) hi = 0x9F;
  } else if (b0 >= 0xF0 && b0 <= 0xF4) {
    need = 4;
    cp = b0 & 0x07;
    if (b0 == 0xF0) lo = 0x90;
    if (b0 == 0xF4) hi = 0x8F;
  } else {
    return {SeqStatus::kInvalid, 1, 0};
  }
  for (size_t i = 1; i < need; ++i) {
    if (pos + i >= text.size()) return {SeqStatus::kIncomplete, i, 0};
    const unsigned char b = byte(pos + i);
    const unsigned char min = i == 1 ? lo : 0x80, max = i == 1 ? hi : 0xBF;
    if (b < min || b > max) return {SeqStatus::kInvalid, i, 0};
    cp = (cp << 6) | (b & 0x3F);
  }
  return {SeqStatus::kComplete, need, cp};
}

void validate(std::string_view text) {
  size_t pos = 0;
  while (pos < text.size()) {
    const Seq s = inspect(text, pos);
    if (s.status == SeqStatus::kComplete) {
      pos += s.length;
      continue;
    }
    const std::string found = hex_bytes(text, pos, s.length + 1);
    throw InvalidUtf8Error(pos, s.status == SeqStatus::kIncomplete
                                    ? "truncated sequence " + found + " at the end of the text"
                                    : "ill-formed sequence starting " + found);
  }
}

void append(std::string& out, char32_t cp) {
  if (cp < 0x80) {
    out += static_cast<char>(cp);
  } else if (cp < 0x800) {
    out += static_cast<char>(0xC0 | (cp >> 6));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else if (cp < 0x10000) {
    out += static_cast<char>(0xE0 | (cp >> 12));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else {
    out += static_cast<char>(0xF0 | (cp >> 18));
    out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  }
}

size_t complete_prefix(std::string_view text) {
  size_t pos = 0;
  while (pos < text.size()) {
    const Seq s = inspect(text, pos);
    if (s.status == SeqStatus::kIncomplete) return pos;
    pos += s.length;
  }
  return pos;
}

}  // namespace utf8
}  // namespace plinth
