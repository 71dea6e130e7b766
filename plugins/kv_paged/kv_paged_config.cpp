#include "kv_paged_config.hpp"

#include <plinth/config.hpp>

#include <algorithm>
#include <cmath>
#include <sstream>
#include <stdexcept>
#include <string>

namespace plinth::kv_paged {

// clang-format off
const char* const kConfigSchema = R"schema({
  "type": "object",
  "additionalProperties": false,
  "properties": {
    "block_size": {"type": "integer", "enum": [1, 2, 4, 8, 16, 32, 64, 128, 256], "default": 16,
      "description": "tokens per KV block (a power of two)"},
    "num_blocks": {"type": "integer", "minimum": 0, "maximum": 16777216, "default": 0,
      "description": "blocks in the pool; 0 = derive from the backend's free memory"},
    "memory_fraction": {"type": "number", "minimum": 0.001, "maximum": 1, "default": 0.9,
      "description": "fraction of the backend's free memory the pool may take when num_blocks is 0"},
    "max_memory_mb": {"type": "integer", "minimum": 0, "maximum": 17592186044415, "default": 0,
      "description": "cap on the pool's memory in MiB when num_blocks is 0; 0 = device default: 2048 on the CPU, none on CUDA"},
    "watermark": {"type": "number", "minimum": 0, "maximum": 0.99, "default": 0.01,
      "description": "fraction of blocks kept free when admitting new sequences"},
    "max_model_len": {"type": "integer", "minimum": 0, "maximum": 4294967295, "default": 0,
      "description": "longest sequence in tokens; create refuses a pool that cannot hold one; 0 = no check"}
  }
})schema";
// clang-format on

namespace {

std::string mib(uint64_t bytes) {
  std::ostringstream s;
  s.precision(1);
  s << std::fixed << static_cast<double>(bytes) / (1024.0 * 1024.0) << " MiB";
  return s.str();
}

}  // namespace

KvPagedConfig parse_config(std::string_view json) {
  // Types, ranges and keys are kConfigSchema's, checked by the host before create().
  const sdk::ConfigReader config("kv_paged", json);
  KvPagedConfig c;
  c.block_size = config.get<uint32_t>("block_size", c.block_size);
  c.num_blocks = config.get<uint32_t>("num_blocks", c.num_blocks);
  c.memory_fraction = config.get<double>("memory_fraction", c.memory_fraction);
  c.max_memory_mb = config.get<uint64_t>("max_memory_mb", c.max_memory_mb);
  c.watermark = config.get<double>("watermark", c.watermark);
  c.max_model_len = config.get<uint32_t>("max_model_len", c.max_model_len);
  return c;
}

PoolSize size_pool(const KvPagedConfig& config, const plinth_kv_layout& layout,
                   const plinth_memory_info& memory) {
  if (layout.bytes_per_token == 0) {
    throw std::invalid_argument("kv_paged: the backend reports bytes_per_token = 0");
  }
  const uint64_t bpb = layout.bytes_per_token * config.block_size;
  const uint64_t min_blocks = std::max<uint64_t>(
      1, (uint64_t{config.max_model_len} + config.block_size - 1) / config.block_size);
  const std::string why =
      config.max_model_len > 0
          ? "max_model_len = " + std::to_string(config.max_model_len) + " tokens needs " +
                std::to_string(min_blocks) + " blocks of " + std::to_string(config.block_size) +
                " tokens"
          : "the pool needs at least 1 block of " + std::to_string(config.block_size) + " tokens";
  PoolSize out{0, bpb, 0};
  if (config.num_blocks > 0) {
    if (config.num_blocks < min_blocks) {
      throw std::invalid_argument("kv_paged: num_blocks = " + std::to_string(config.num_blocks) +
                                  " is too small: " + why +
                                  "; set num_blocks >= " + std::to_string(min_blocks));
    }
    out.num_blocks = config.num_blocks;
  } else {
    uint64_t cap_mb = config.max_memory_mb;
    if (cap_mb == 0 && memory.device_kind == PLINTH_DEVICE_CPU) cap_mb = kCpuDefaultMaxMemoryMb;
    const auto by_fraction =
        static_cast<uint64_t>(static_cast<double>(memory.free_bytes) * config.memory_fraction);
    const uint64_t cap = cap_mb > 0 ? cap_mb << 20 : UINT64_MAX;
    const uint64_t budget = std::min(by_fraction, cap);
    const uint64_t blocks = std::min<uint64_t>(budget / bpb, kMaxNumBlocks);
    if (blocks < min_blocks) {
      const uint64_t need = min_blocks * bpb;
      std::string fix;
      if (by_fraction < need) {
        double f = static_cast<double>(need) /
                   static_cast<double>(std::max<uint64_t>(1, memory.free_bytes));
        if (f > 1.0) {
          fix += "the backend has only " + mib(memory.free_bytes) +
                 " free; lower max_model_len or use a smaller model";
        } else {
          std::ostringstream s;
          s.precision(4);
          s << "raise memory_fraction to >= " << std::ceil(f * 10000.0) / 10000.0 << " (now "
            << config.memory_fraction << ")";
          fix += s.str();
        }
      }
      if (cap < need) {
        if (!fix.empty()) fix += " and ";
        fix += "raise max_memory_mb to >= " + std::to_string((need + (1u << 20) - 1) >> 20) +
               " (now " + std::to_string(cap_mb) + ")";
      }
      throw std::invalid_argument("kv_paged: the pool gets " + mib(budget) + " = " +
                                  std::to_string(blocks) + " blocks of " + mib(bpb) + ", but " +
                                  why + " (" + mib(need) + "): " + fix +
                                  ", or set num_blocks explicitly");
    }
    out.num_blocks = static_cast<uint32_t>(blocks);
  }
  out.watermark_blocks =
      static_cast<uint32_t>(std::floor(config.watermark * static_cast<double>(out.num_blocks)));
  return out;
}

}  // namespace plinth::kv_paged
