#pragma once
// GPT-2's reversible byte <-> Unicode mapping (openai/gpt-2 encoder.py `bytes_to_unicode`): byte
// values that are printable Latin-1 map to themselves, the other 68 to U+0100.. in byte order, so a
// vocabulary of printable strings covers every byte sequence (' ' -> 'Ġ', '\n' -> 'Ċ').

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace plinth::byte_unicode {

/// Code point that byte `b` is written as in a byte-level BPE vocabulary.
char32_t byte_to_code_point(uint8_t b);

/// UTF-8 text of byte_to_code_point(b).
const std::string& byte_to_utf8(uint8_t b);

/// Inverse of byte_to_code_point; nullopt for a code point that stands for no byte.
std::optional<uint8_t> code_point_to_byte(char32_t cp);

/// Maps each byte of `raw` to its vocabulary character (UTF-8 result).
std::string encode(std::string_view raw);

/// Inverse of encode for a vocabulary entry: each character that stands for a byte becomes that
/// byte; any other character (only in malformed vocabularies) is kept as its UTF-8 text.
/// Precondition: `text` is well-formed UTF-8 (vocabulary entries are validated on load).
std::string decode(std::string_view text);

}  // namespace plinth::byte_unicode
