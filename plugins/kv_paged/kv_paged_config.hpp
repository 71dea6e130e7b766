// kv_paged — the manifest config and the pool sizing rule (how many blocks fit the memory the
// backend reports). Pure functions, so tests check them without a backend.
#pragma once

#include <plinth/backend.h>

#include <cstdint>
#include <string_view>

namespace plinth::kv_paged {

/// On the CPU the backend reports free RAM, of which the pool takes at most this much unless the
/// manifest sets max_memory_mb: enough for ~45k tokens of SmolLM2-135M (F32 KV, 45 KiB/token)
/// without taking a shared machine's memory.
inline constexpr uint64_t kCpuDefaultMaxMemoryMb = 2048;
/// Upper bound on num_blocks (block ids are int32; 2^24 blocks of 16 tokens = 268M tokens).
inline constexpr uint32_t kMaxNumBlocks = 1u << 24;

struct KvPagedConfig {
  uint32_t block_size = 16;      // tokens per block, power of two 1..256
  uint32_t num_blocks = 0;       // 0 = derive from memory; else 1..kMaxNumBlocks
  double memory_fraction = 0.9;  // of the backend's free memory, (0, 1]
  uint64_t max_memory_mb = 0;    // cap in MiB; 0 = device default (CPU 2048, CUDA none)
  double watermark = 0.01;       // fraction of blocks the scheduler keeps free at admission [0, 1)
  uint32_t max_model_len = 0;    // tokens one sequence may reach; 0 = no check at create
};

/// Reads the config create() receives (JSON text; "" or "{}" = defaults), which the host has
/// validated against kConfigSchema (types, ranges, power-of-two block_size, no unknown keys).
/// Throws std::invalid_argument naming the key only for what C++ cannot read (a value of the
/// wrong JSON type, an integer that does not fit its field), not for the schema's ranges.
KvPagedConfig parse_config(std::string_view json);

/// The result of sizing.
struct PoolSize {
  uint32_t num_blocks;
  uint64_t bytes_per_block;   // block_size * layout.bytes_per_token
  uint32_t watermark_blocks;  // floor(watermark * num_blocks)
};

/// Sizes the pool: num_blocks when set, else min(free_bytes * memory_fraction, cap) /
/// bytes_per_block (cap: max_memory_mb, or kCpuDefaultMaxMemoryMb on the CPU). Throws
/// std::invalid_argument when the pool could not hold one block, or ceil(max_model_len /
/// block_size) blocks when max_model_len > 0; the message names the option to change and the
/// smallest value that works.
PoolSize size_pool(const KvPagedConfig& config, const plinth_kv_layout& layout,
                   const plinth_memory_info& memory);

/// The config's JSON Schema (the subset the host validates), published by the plugin.
extern const char* const kConfigSchema;

}  // namespace plinth::kv_paged
