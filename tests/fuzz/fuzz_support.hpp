// Helpers shared by the fuzz targets: a byte reader over the input, GGUF bytes opened through the
// real reader, and one tokenizer + chat template (the real model's when present, else generated)
// built once per process.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "chat/chat_template.hpp"
#include "model/gguf.hpp"
#include "tokenizer/tokenizer.hpp"

namespace plinth::fuzz {

/// Aborts with `what` on stderr when `failed`: an invariant the code under test promises is
/// broken, which libFuzzer reports as a crash and the replay test as a failure.
void crash_if(bool failed, const char* what);

/// Consumes the fuzz input front to back; reads past the end give zeros / empty strings.
class ByteReader {
 public:
  ByteReader(const uint8_t* data, size_t size) : data_(data), size_(size) {}
  bool empty() const { return pos_ >= size_; }
  size_t remaining() const { return size_ - pos_; }
  uint8_t byte() { return empty() ? 0 : data_[pos_++]; }
  uint16_t u16() { return static_cast<uint16_t>(byte() | (byte() << 8)); }
  /// Up to `n` bytes as a string.
  std::string bytes(size_t n);
  /// Bytes up to the next `sep` (consumed, not returned) or the end.
  std::string until(uint8_t sep);
  /// Everything left.
  std::string rest() { return bytes(remaining()); }

 private:
  const uint8_t* data_;
  size_t size_;
  size_t pos_ = 0;
};

/// Opens `bytes` with GgufFile::open (through an in-memory file, /proc/self/fd of a memfd, so the
/// real mmap path runs). Throws what GgufFile::open throws.
std::unique_ptr<GgufFile> open_gguf_bytes(std::string_view bytes);

/// The tokenizer and chat template the tokenizer, chat and request targets use: those of
/// $PLINTH_FUZZ_MODEL, else models/SmolLM2-135M-Instruct.Q4_1.gguf of the source tree when
/// present, else the generated SmolLM2-sized tokenizer (add_synthetic_tokenizer) with a ChatML
/// template. Built on first use; immutable.
struct SharedModel {
  std::unique_ptr<GgufFile> file;  // keeps the tokenizer's source mapped
  std::unique_ptr<Tokenizer> tokenizer;
  std::unique_ptr<ChatTemplate> chat;
  std::string source;  // which of the three
};
const SharedModel& shared_model();

}  // namespace plinth::fuzz
