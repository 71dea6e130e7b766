// kv_paged config parsing and pool sizing, including the refusals and their messages.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <functional>
#include <stdexcept>
#include <string>

#include "common/host_config.hpp"
#include "kv_paged_config.hpp"

using namespace plinth::kv_paged;

namespace {

std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "";
}

plinth_kv_layout layout(uint64_t bytes_per_token) {
  plinth_kv_layout l{};
  l.struct_size = sizeof(l);
  l.bytes_per_token = bytes_per_token;
  return l;
}

plinth_memory_info memory(int32_t kind, uint64_t free_bytes) {
  plinth_memory_info m{};
  m.struct_size = sizeof(m);
  m.device_kind = kind;
  m.free_bytes = free_bytes;
  m.total_bytes = free_bytes;
  return m;
}

}  // namespace

TEST(KvPagedConfig, DefaultsAndParsing) {
  KvPagedConfig d = parse_config("{}");
  EXPECT_EQ(d.block_size, 16u);
  EXPECT_EQ(d.num_blocks, 0u);
  EXPECT_DOUBLE_EQ(d.memory_fraction, 0.9);
  EXPECT_DOUBLE_EQ(d.watermark, 0.01);
  KvPagedConfig c = parse_config(
      R"({"block_size": 32, "num_blocks": 100, "memory_fraction": 0.5, "max_memory_mb": 64,
          "watermark": 0.05, "max_model_len": 4096})");
  EXPECT_EQ(c.block_size, 32u);
  EXPECT_EQ(c.num_blocks, 100u);
  EXPECT_DOUBLE_EQ(c.memory_fraction, 0.5);
  EXPECT_EQ(c.max_memory_mb, 64u);
  EXPECT_DOUBLE_EQ(c.watermark, 0.05);
  EXPECT_EQ(c.max_model_len, 4096u);
}

// Every bad value is refused by the host's schema check (before create), naming the key.
TEST(KvPagedConfig, HostRefusesBadValuesNamingTheKey) {
  const auto refusal = [](const char* config) {
    return plinth::test::host_config(kConfigSchema, config).error;
  };
  EXPECT_EQ(
      refusal(R"({"block_size": 24})"),
      "plugins[1].config.block_size: must be one of 1, 2, 4, 8, 16, 32, 64, 128, 256, got 24");
  EXPECT_NE(refusal(R"({"block_size": 512})").find("config.block_size: must be one of"),
            std::string::npos);
  EXPECT_NE(refusal(R"({"block_size": "16"})").find("config.block_size: must be an integer"),
            std::string::npos);
  EXPECT_EQ(refusal(R"({"memory_fraction": 0})"),
            "plugins[1].config.memory_fraction: must be between 0.001 and 1, got 0");
  EXPECT_EQ(refusal(R"({"memory_fraction": 1.5})"),
            "plugins[1].config.memory_fraction: must be between 0.001 and 1, got 1.5");
  EXPECT_EQ(refusal(R"({"num_blocks": -1})"),
            "plugins[1].config.num_blocks: must be between 0 and 16777216, got -1");
  EXPECT_EQ(refusal(R"({"watermark": 1})"),
            "plugins[1].config.watermark: must be between 0 and 0.99, got 1");
  // The bounds the fields' C++ types set are the schema's too.
  EXPECT_EQ(refusal(R"({"max_model_len": 4294967296})"),
            "plugins[1].config.max_model_len: must be between 0 and 4294967295, got 4294967296");
  EXPECT_EQ(refusal(R"({"max_memory_mb": 17592186044416})"),
            "plugins[1].config.max_memory_mb: must be between 0 and 17592186044415, got "
            "17592186044416");
  EXPECT_NE(refusal(R"({"blocksize": 16})").find("config.blocksize: unknown option"),
            std::string::npos);
}

// What the host accepts, defaults filled, parses to the values written.
TEST(KvPagedConfig, ReadsWhatTheHostPasses) {
  const auto passed = plinth::test::host_config(kConfigSchema, R"({"block_size": 64.0})");
  ASSERT_EQ(passed.error, "");
  KvPagedConfig c = parse_config(passed.text);
  EXPECT_EQ(c.block_size, 64u);
  EXPECT_DOUBLE_EQ(c.memory_fraction, 0.9);
  EXPECT_EQ(parse_config(R"({"max_memory_mb": 17592186044415})").max_memory_mb, UINT64_MAX >> 20);
}

// Created without the host, a config C++ cannot read is still refused, naming the key.
TEST(KvPagedConfig, RefusesWhatCppCannotRead) {
  EXPECT_EQ(error_of([] { parse_config(R"({"block_size": "16"})"); }),
            "kv_paged: config.block_size must be an integer in 0..4294967295, got \"16\"");
  EXPECT_EQ(error_of([] { parse_config(R"({"num_blocks": -1})"); }),
            "kv_paged: config.num_blocks must be an integer in 0..4294967295, got -1");
  EXPECT_NE(error_of([] { parse_config("[1]"); }).find("must be a JSON object"), std::string::npos);
  EXPECT_NE(error_of([] { parse_config("{"); }).find("not valid JSON"), std::string::npos);
}

TEST(KvPagedConfig, SchemaIsValidJsonWithDefaultsMatchingTheParser) {
  auto schema = nlohmann::json::parse(kConfigSchema);
  EXPECT_EQ(schema["type"], "object");
  EXPECT_EQ(schema["additionalProperties"], false);
  KvPagedConfig d;
  EXPECT_EQ(schema["properties"]["block_size"]["default"], d.block_size);
  EXPECT_EQ(schema["properties"]["num_blocks"]["default"], d.num_blocks);
  EXPECT_EQ(schema["properties"]["memory_fraction"]["default"], d.memory_fraction);
  EXPECT_EQ(schema["properties"]["watermark"]["default"], d.watermark);
  // A config made of every default parses to the defaults.
  nlohmann::json defaults = nlohmann::json::object();
  for (const auto& [k, v] : schema["properties"].items()) defaults[k] = v["default"];
  KvPagedConfig p = parse_config(defaults.dump());
  EXPECT_EQ(p.block_size, d.block_size);
  EXPECT_EQ(p.max_memory_mb, d.max_memory_mb);
}

TEST(KvPagedSizing, DerivesFromMemoryFraction) {
  KvPagedConfig c;  // block 16, fraction 0.9
  PoolSize s = size_pool(c, layout(1024), memory(PLINTH_DEVICE_CUDA, 100ull << 20));
  EXPECT_EQ(s.bytes_per_block, 16u * 1024u);
  EXPECT_EQ(s.num_blocks, static_cast<uint32_t>((100ull << 20) * 0.9 / (16 * 1024)));
  EXPECT_EQ(s.watermark_blocks, s.num_blocks / 100);
}

TEST(KvPagedSizing, CpuIsCappedByDefaultAndByMaxMemoryMb) {
  KvPagedConfig c;
  PoolSize s = size_pool(c, layout(1024), memory(PLINTH_DEVICE_CPU, 64ull << 30));
  EXPECT_EQ(s.num_blocks, (kCpuDefaultMaxMemoryMb << 20) / (16 * 1024));
  c.max_memory_mb = 16;
  s = size_pool(c, layout(1024), memory(PLINTH_DEVICE_CPU, 64ull << 30));
  EXPECT_EQ(s.num_blocks, 1024u);
  s = size_pool(c, layout(1024), memory(PLINTH_DEVICE_CUDA, 64ull << 30));
  EXPECT_EQ(s.num_blocks, 1024u);  // an explicit cap applies on CUDA too
}

TEST(KvPagedSizing, ExplicitNumBlocksWins) {
  KvPagedConfig c;
  c.num_blocks = 7;
  EXPECT_EQ(size_pool(c, layout(1), memory(PLINTH_DEVICE_CPU, 0)).num_blocks, 7u);
}

TEST(KvPagedSizing, RefusesPoolTooSmallNamingOptionAndMinimum) {
  KvPagedConfig c;
  c.max_model_len = 8192;  // 512 blocks of 16
  c.num_blocks = 100;
  std::string e =
      error_of([&] { size_pool(c, layout(1024), memory(PLINTH_DEVICE_CPU, 1ull << 30)); });
  EXPECT_NE(e.find("num_blocks >= 512"), std::string::npos) << e;
  c.num_blocks = 0;
  c.max_memory_mb = 4;  // 256 blocks of 16 KiB
  e = error_of([&] { size_pool(c, layout(1024), memory(PLINTH_DEVICE_CPU, 1ull << 30)); });
  EXPECT_NE(e.find("max_memory_mb to >= 8"), std::string::npos) << e;
  c.max_memory_mb = 0;
  e = error_of([&] { size_pool(c, layout(1024), memory(PLINTH_DEVICE_CUDA, 4ull << 20)); });
  EXPECT_NE(e.find("only 4.0 MiB free"), std::string::npos) << e;
  c.memory_fraction = 0.1;
  e = error_of([&] { size_pool(c, layout(1024), memory(PLINTH_DEVICE_CUDA, 16ull << 20)); });
  EXPECT_NE(e.find("memory_fraction to >= 0.5"), std::string::npos) << e;
  c.max_model_len = 0;  // even one block must fit
  e = error_of([&] { size_pool(c, layout(1024), memory(PLINTH_DEVICE_CUDA, 1000)); });
  EXPECT_NE(e.find("at least 1 block"), std::string::npos) << e;
  EXPECT_NE(error_of([&] { size_pool(c, layout(0), memory(PLINTH_DEVICE_CUDA, 1000)); }), "");
}
