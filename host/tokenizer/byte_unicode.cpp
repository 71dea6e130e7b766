#include "tokenizer/byte_unicode.hpp"

#include "tokenizer/utf8.hpp"

namespace plinth::byte_unicode {
namespace {

struct Tables {
  std::array<char32_t, 256> to_cp{};
  std::array<std::string, 256> to_utf8{};
  std::array<int16_t, 324> from_cp{};  // code points used are < 256 + 68

  Tables() {
    from_cp.fill(-1);
    char32_t next = 256;
    for (int b = 0; b < 256; ++b) {
      const bool printable = (b >= '!' && b <= '~') || (b >= 0xA1 && b <= 0xAC) || b >= 0xAE;
      to_cp[b] = printable ? static_cast<char32_t>(b) : next++;
      from_cp[to_cp[b]] = static_cast<int16_t>(b);
      utf8::append(to_utf8[b], to_cp[b]);
    }
  }
};

const Tables& tables() {
  static const Tables t;
  return t;
}

}  // namespace

char32_t byte_to_code_point(uint8_t b) {
  return tables().to_cp[b];
}

const std::string& byte_to_utf8(uint8_t b) {
  return tables().to_utf8[b];
}

std::optional<uint8_t> code_point_to_byte(char32_t cp) {
  const auto& t = tables();
  if (cp >= t.from_cp.size() || t.from_cp[cp] < 0) return std::nullopt;
  return static_cast<uint8_t>(t.from_cp[cp]);
}

std::string encode(std::string_view raw) {
  std::string out;
  out.reserve(raw.size() * 2);
  for (const char c : raw) out += byte_to_utf8(static_cast<uint8_t>(c));
  return out;
}

std::string decode(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  size_t pos = 0;
  while (pos < text.size()) {
    const utf8::Seq s = utf8::inspect(text, pos);
    const auto b =
        s.status == utf8::SeqStatus::kComplete ? code_point_to_byte(s.code_point) : std::nullopt;
    if (b) {
      out += static_cast<char>(*b);
    } else {
      out.append(text.substr(pos, s.length));
    }
    pos += s.length;
  }
  return out;
}

}  // namespace plinth::byte_unicode
