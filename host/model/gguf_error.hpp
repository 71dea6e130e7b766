// The one exception type of the GGUF reader.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>

namespace plinth {

/// Malformed or unsupported GGUF input. what() names file, byte offset and field:
/// "<path>: offset <offset> (<field>): <what>". offset() is the byte offset in the file where the
/// offending field starts (0 when the problem is not tied to a position, e.g. a missing key).
class GgufError : public std::runtime_error {
 public:
  GgufError(const std::string& path, uint64_t offset, const std::string& field,
            const std::string& what);
  uint64_t offset() const { return offset_; }
  const std::string& field() const { return field_; }
  /// The problem alone, without path, offset and field.
  const std::string& detail() const { return detail_; }

 private:
  uint64_t offset_;
  std::string field_;
  std::string detail_;
};

}  // namespace plinth
