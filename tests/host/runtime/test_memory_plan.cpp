// `plinth manifest check` with the real model: loads the GGUF, creates backend + kv_cache and
// prints the memory plan. Expected sizes from SmolLM2-135M's published shape (30 layers, 3 KV
// heads, head_dim 64) and the test backend's f16 K/V and 256 MiB.
#include <gtest/gtest.h>

#include <cstdio>

#include "plinth/abi.h"
#include "run_plinth.hpp"

TEST(MemoryPlan, SmolLM2WithTestPlugins) {
  const std::string model = PLINTH_SOURCE_DIR "/models/SmolLM2-135M-Instruct.Q4_1.gguf";
  if (!std::filesystem::exists(model))
    GTEST_SKIP() << "no model at " << model << ": run tools/fetch_model";
  auto r = plinth_test::run_plinth("manifest check '" PLINTH_SOURCE_DIR
                                   "/tests/fixtures/manifests/good_test_plugins.json'");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const uint64_t per_token = 2ull * 30 * 3 * 64 * 2;  // K,V x layers x KV heads x head_dim x f16
  const uint64_t per_block = per_token * 16;
  const uint64_t blocks = static_cast<uint64_t>((256.0 * 1024 * 1024 * 0.9) / per_block);
  EXPECT_NE(r.out.find("KV per token:     " + std::to_string(per_token) +
                       " bytes (30 layers x 3 KV heads x 64 head_dim"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("bytes per block:  " + std::to_string(per_block) + " (16 tokens per block)"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("number of blocks: " + std::to_string(blocks) + " "), std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("KV capacity:      " + std::to_string(blocks * 16) + " tokens"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("llama, 30 layers, hidden 576, 9 heads (3 KV), vocab 49152"),
            std::string::npos)
      << r.out;
}

// The shipped manifest with the real plugins (once they are built in this tree).
TEST(MemoryPlan, ShippedCpuManifestChecks) {
  for (const char* p : {"backend_cpu", "kv_paged", "scheduler_continuous"}) {
    if (!std::filesystem::exists(std::string(PLINTH_PLUGIN_DIR "/libplinth_") + p + ".so")) {
      GTEST_SKIP() << p << " is not built";
    }
  }
  auto r = plinth_test::run_plinth("manifest check '" PLINTH_SOURCE_DIR "/manifests/cpu.json'");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  char abi[64];
  std::snprintf(abi, sizeof(abi), "kv_paged: kv_paged 0.1.0, ABI %d.%d", PLINTH_ABI_MAJOR,
                PLINTH_ABI_MINOR);
  EXPECT_NE(r.out.find(abi), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("memory plan (kv_cache \"kv_paged\" over backend \"backend_cpu\")"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("(16 tokens per block)"), std::string::npos) << r.out;
}
