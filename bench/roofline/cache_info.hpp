// CPU cache sizes as Linux reports them in sysfs.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace plinth::roofline {

/// One cache of a CPU, from /sys/devices/system/cpu/cpuN/cache/indexK/.
struct CacheLevel {
  int level = 0;                // 1, 2, 3
  std::string type;             // "Data", "Instruction", "Unified"
  uint64_t size_bytes = 0;      // "size" ("48K", "2048K", "260M") in bytes
  std::string shared_cpu_list;  // CPUs sharing it, e.g. "0-1"
};

/// Reads every index* folder under `dir` (default: CPU 0's caches), sorted by level then type.
/// Returns an empty vector when the folder is absent (non-Linux, containers hiding sysfs);
/// unreadable or malformed entries are skipped. Thread-safe.
std::vector<CacheLevel> read_caches(const std::string& dir = "/sys/devices/system/cpu/cpu0/cache");

/// Size in bytes of the data or unified cache of `level` in `caches`, 0 when there is none.
uint64_t cache_size(const std::vector<CacheLevel>& caches, int level);

}  // namespace plinth::roofline
