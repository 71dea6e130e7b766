#include "model/output_path.hpp"

#include <sys/stat.h>

namespace plinth {

namespace {

// A non-regular file type in words; "" for a regular file.
std::string kind_of(mode_t mode) {
  if (S_ISREG(mode)) return "";
  if (S_ISDIR(mode)) return "a directory";
  if (S_ISFIFO(mode)) return "a FIFO (named pipe)";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISSOCK(mode)) return "a socket";
  return "not a regular file";
}

}  // namespace

std::string non_regular_output(const std::string& path) {
  struct stat link {};
  if (::lstat(path.c_str(), &link) != 0) return "";  // nothing there (or not inspectable)
  if (!S_ISLNK(link.st_mode)) return kind_of(link.st_mode);
  struct stat target {};
  if (::stat(path.c_str(), &target) != 0) return "";  // a dangling link: the rename replaces it
  const std::string kind = kind_of(target.st_mode);
  return kind.empty() ? "" : "a symbolic link to " + kind;
}

std::string non_regular_output_message(const std::string& path, const std::string& kind) {
  return path + " is " + kind +
         ", not a regular file; give the path of a regular file (it is replaced) or of a new one";
}

}  // namespace plinth
