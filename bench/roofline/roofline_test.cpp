// plinth_roofline: the parts with an answer known without timing (no timed assertions).
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <stdexcept>

#include <unistd.h>

#include "cache_info.hpp"
#include "model/gguf.hpp"
#include "model_cost.hpp"
#include "roofline.hpp"

namespace fs = std::filesystem;
using namespace plinth::roofline;

namespace {

void write(const fs::path& p, const std::string& text) {
  fs::create_directories(p.parent_path());
  std::ofstream(p) << text << "\n";
}

}  // namespace

TEST(CacheInfo, ReadsSysfsLayout) {
  const fs::path dir = fs::temp_directory_path() / ("roofline_caches_" + std::to_string(getpid()));
  const auto index = [&](int k, const char* level, const char* type, const char* size) {
    write(dir / ("index" + std::to_string(k)) / "level", level);
    write(dir / ("index" + std::to_string(k)) / "type", type);
    write(dir / ("index" + std::to_string(k)) / "size", size);
    write(dir / ("index" + std::to_string(k)) / "shared_cpu_list", "0-1");
  };
  index(0, "1", "Data", "48K");
  index(1, "1", "Instruction", "32K");
  index(2, "2", "Unified", "2048K");
  index(3, "3", "Unified", "260M");
  write(dir / "uevent", "");  // not an index folder: ignored
  const std::vector<CacheLevel> caches = read_caches(dir.string());
  fs::remove_all(dir);
  ASSERT_EQ(caches.size(), 4u);
  EXPECT_EQ(cache_size(caches, 1), 48u * 1024);  // the data cache, not the instruction one
  EXPECT_EQ(cache_size(caches, 2), 2048u * 1024);
  EXPECT_EQ(cache_size(caches, 3), 260ull * 1024 * 1024);
  EXPECT_EQ(cache_size(caches, 4), 0u);
  EXPECT_EQ(caches[3].shared_cpu_list, "0-1");
  EXPECT_TRUE(read_caches((dir / "absent").string()).empty());
}

TEST(StepBound, MemoryAndComputeBound) {
  ModelCost c;
  c.layer_macs = 100;
  c.head_macs = 10;
  c.n_layers = 1;
  c.n_heads = 1;
  c.head_dim = 1;
  // 1e9 bytes at 10 GB/s = 0.1 s; compute 110 MACs at 1e9/s is nothing: 10 tokens/s.
  EXPECT_DOUBLE_EQ(step_bound_tps(c, 1e9, 1, 1, 0, 10, 1e9, 1e9), 10.0);
  // 1000 tokens: (1000 × 100 + 1 × 10) / 1000 MAC/s = 100.01 s, + attention 1000 × 2 × 1 × 1 ×
  // 1 × 4 MACs at 8000/s = 1 s; memory 1 byte: 1000 / 101.01 tokens/s.
  EXPECT_DOUBLE_EQ(step_bound_tps(c, 1, 1000, 1, 4, 10, 1000, 8000), 1000 / 101.01);
}

TEST(Bounds, JsonRoundTripAndThreadChoice) {
  Bounds b;
  b.cpu_model = "test cpu";
  b.int8_isa = "avx512-vnni";
  b.f32_isa = "avx512";
  b.runs = 2;
  b.caches = {{2, "Unified", 2048, "0"}};
  TriadResult t1;
  t1.threads = 1;
  t1.working_set_bytes = 1 << 20;
  t1.gbps = {1, 2};
  t1.median_gbps = 1.5;
  t1.cpu_gbps = {10, 12};
  t1.median_cpu_gbps = 11;
  TriadResult t2 = t1;
  t2.threads = 2;
  t2.median_cpu_gbps = 21;
  b.bandwidth = {{"DRAM", t1}, {"DRAM", t2}};
  b.int8 = {{1, {5}, 5, {100}, 100}, {2, {6}, 6, {200}, 200}};
  b.f32 = {{1, {1}, 1, {25}, 25}};
  const Bounds r = bounds_from_json(to_json(b), "test");
  EXPECT_EQ(r.cpu_model, "test cpu");
  EXPECT_EQ(r.caches.at(0).size_bytes, 2048u);
  EXPECT_DOUBLE_EQ(r.gbps("DRAM", 1), 11);  // the per-CPU-second rate
  EXPECT_DOUBLE_EQ(r.gbps("DRAM", 2), 21);
  EXPECT_DOUBLE_EQ(r.gbps("DRAM", 8), 21);  // the largest count ≤ 8
  EXPECT_DOUBLE_EQ(r.int8_macs(2), 200);
  EXPECT_DOUBLE_EQ(r.f32_fmas(2), 25);  // only 1 thread measured
  EXPECT_THROW(r.gbps("L3", 1), std::out_of_range);
  EXPECT_THROW(bounds_from_json(nlohmann::json{{"schema", "other"}}, "x.json"), std::runtime_error);
  EXPECT_THROW(load_bounds("/nonexistent/roofline.json"), std::runtime_error);
}

TEST(ModelCost, SmolLM2FromItsShapes) {
  const std::string path = PLINTH_SOURCE_DIR "/models/SmolLM2-135M-Instruct.Q4_1.gguf";
  if (!fs::exists(path)) GTEST_SKIP() << path << " absent";
  const ModelCost c = model_cost(*plinth::GgufFile::open(path));
  // SmolLM2-135M: 30 layers, hidden 576, 9 heads / 3 KV heads of 64, FFN 1536, vocab 49152, tied.
  const uint64_t per_layer = 2 * 576 * 576 + 2 * 576 * 192 + 3 * 576 * 1536;
  EXPECT_EQ(c.layer_macs, 30 * per_layer);
  EXPECT_EQ(c.head_macs, 49152u * 576);
  EXPECT_EQ(c.layer_bytes, c.layer_macs / 32 * 20);  // Q4_1: 20 bytes per 32 weights
  EXPECT_EQ(c.head_bytes, c.head_macs / 32 * 34);    // the tied Q8_0 embedding: 34 per 32
  EXPECT_EQ(c.layer_types, "Q4_1");
  EXPECT_EQ(c.head_type, "Q8_0");
  EXPECT_DOUBLE_EQ(c.attention_macs(10), 2.0 * 30 * 9 * 64 * 10);
}
