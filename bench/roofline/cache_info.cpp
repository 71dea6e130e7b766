#include "cache_info.hpp"

#include <algorithm>
#include <filesystem>
#include <fstream>

namespace plinth::roofline {
namespace {

std::string read_line(const std::filesystem::path& file) {
  std::ifstream in(file);
  std::string s;
  std::getline(in, s);
  return s;
}

/// "48K" → 49152, "260M" → 272629760, "1024" → 1024; 0 when malformed.
uint64_t parse_size(const std::string& s) {
  size_t used = 0;
  uint64_t v = 0;
  try {
    v = std::stoull(s, &used);
  } catch (const std::exception&) {
    return 0;
  }
  const std::string unit = s.substr(used);
  if (unit == "K") return v << 10;
  if (unit == "M") return v << 20;
  if (unit == "G") return v << 30;
  return unit.empty() ? v : 0;
}

}  // namespace

std::vector<CacheLevel> read_caches(const std::string& dir) {
  namespace fs = std::filesystem;
  std::vector<CacheLevel> out;
  std::error_code ec;
  for (const fs::directory_entry& e : fs::directory_iterator(dir, ec)) {
    if (e.path().filename().string().rfind("index", 0) != 0) continue;
    CacheLevel c;
    try {
      c.level = std::stoi(read_line(e.path() / "level"));
    } catch (const std::exception&) {
      continue;
    }
    c.type = read_line(e.path() / "type");
    c.size_bytes = parse_size(read_line(e.path() / "size"));
    c.shared_cpu_list = read_line(e.path() / "shared_cpu_list");
    if (c.size_bytes > 0) out.push_back(c);
  }
  std::sort(out.begin(), out.end(), [](const CacheLevel& a, const CacheLevel& b) {
    return a.level != b.level ? a.level < b.level : a.type < b.type;
  });
  return out;
}

uint64_t cache_size(const std::vector<CacheLevel>& caches, int level) {
  for (const CacheLevel& c : caches) {
    if (c.level == level && c.type != "Instruction") return c.size_bytes;
  }
  return 0;
}

}  // namespace plinth::roofline
