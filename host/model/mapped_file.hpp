// A read-only POSIX memory mapping of a whole file, alive as long as the object.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace plinth {

/// Maps `path` read-only (MAP_PRIVATE). An empty file maps to data() == nullptr, size() == 0.
/// Throws GgufError (field "file") when the file cannot be opened, is not a regular file or
/// cannot be mapped. Not copyable; pointers into data() stay valid until destruction. If another
/// process truncates the file while mapped, reads past the new end raise SIGBUS (POSIX mmap).
class MappedFile {
 public:
  explicit MappedFile(const std::string& path);
  ~MappedFile();
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;

  const std::byte* data() const { return data_; }
  uint64_t size() const { return size_; }

 private:
  const std::byte* data_ = nullptr;
  uint64_t size_ = 0;
};

}  // namespace plinth
