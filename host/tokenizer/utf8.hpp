#pragma once
// UTF-8 validation and decoding (RFC 3629 / Unicode 15 §3.9, table 3-7: no overlongs, no
// surrogates, nothing above U+10FFFF).

#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>

namespace plinth {

/// Text handed to the tokenizer is not well-formed UTF-8. what() gives the byte offset of the
/// first bad byte and the bytes found there.
class InvalidUtf8Error : public std::invalid_argument {
 public:
  InvalidUtf8Error(size_t offset, const std::string& detail);
  /// Byte offset (from the start of the input) of the first ill-formed sequence.
  size_t offset() const { return offset_; }

 private:
  size_t offset_;
};

namespace utf8 {

/// Result of looking at the sequence that starts at one byte.
enum class SeqStatus {
  kComplete,    // a whole, well-formed character of `length` bytes
  kIncomplete,  // a well-formed prefix that runs into the end of the input (`length` bytes seen)
  kInvalid,     // ill-formed; `length` is the maximal subpart to replace with one U+FFFD (>= 1)
};

struct Seq {
  SeqStatus status;
  size_t length;
  char32_t code_point;  // valid only when status == kComplete
};

/// Inspects the sequence starting at `text[pos]` (pos < text.size()).
Seq inspect(std::string_view text, size_t pos);

/// Throws InvalidUtf8Error naming the byte offset of the first ill-formed or truncated sequence.
void validate(std::string_view text);

/// Appends the UTF-8 encoding of `cp` (a Unicode scalar value) to `out`.
void append(std::string& out, char32_t cp);

/// Length of the longest prefix of `text` that ends on a character boundary, treating a
/// well-formed but truncated sequence at the very end as not yet complete.
size_t complete_prefix(std::string_view text);

}  // namespace utf8
}  // namespace plinth
