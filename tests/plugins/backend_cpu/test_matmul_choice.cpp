// backend_cpu's `"matmul": "auto"` (matmul_choice.hpp, parse_config in cpu_backend.hpp): int8
// where the CPU has a vector int8 kernel (AVX-512 VNNI, AVX-VNNI, AVX2), float elsewhere; the
// label the start-up log prints; the other values of `matmul` as the schema lists them.
#include <gtest/gtest.h>

#include <stdexcept>
#include <string>

#include "common/host_config.hpp"
#include "cpu_backend.hpp"
#include "matmul_choice.hpp"

namespace plinth::cpu {
namespace {

constexpr Int8Kernel kScalar = Int8Kernel::kScalar;
constexpr Int8Kernel kAvx2 = Int8Kernel::kAvx2;
constexpr Int8Kernel kAvx512Vnni = Int8Kernel::kAvx512Vnni;  // Zen 4, Sapphire Rapids

TEST(MatmulChoice, AutoIsInt8WithAVectorInt8KernelAndFloatElsewhere) {
  EXPECT_EQ(choose_auto_matmul(kScalar).path, MatmulPath::kFloat);
  EXPECT_NE(choose_auto_matmul(kScalar).reason.find("no AVX2"), std::string::npos);
  EXPECT_EQ(choose_auto_matmul(kAvx2).path, MatmulPath::kInt8);
  EXPECT_EQ(choose_auto_matmul(kAvx2).reason, "AVX2");
  EXPECT_EQ(choose_auto_matmul(Int8Kernel::kAvxVnni).path, MatmulPath::kInt8);
  EXPECT_EQ(choose_auto_matmul(Int8Kernel::kAvxVnni).reason, "AVX-VNNI");
  EXPECT_EQ(choose_auto_matmul(kAvx512Vnni).path, MatmulPath::kInt8);
  EXPECT_EQ(choose_auto_matmul(kAvx512Vnni).reason, "AVX-512 VNNI");
}

// On this CPU: int8 exactly where the kernels have AVX2 (the AVX2 int8 kernel's requirement), and
// forcing a lower int8 kernel (as tests and PLINTH_INT8_KERNEL do) leaves `auto` alone.
TEST(MatmulChoice, OnThisCpuAutoFollowsTheBestInt8Kernel) {
  EXPECT_EQ(choose_auto_matmul().path,
            has_avx2(best_isa()) ? MatmulPath::kInt8 : MatmulPath::kFloat);
  EXPECT_EQ(parse_config("{}").forward.matmul, choose_auto_matmul().path);
  set_int8_kernel(Int8Kernel::kScalar);
  EXPECT_EQ(parse_config("{}").forward.matmul, choose_auto_matmul(best_int8_kernel()).path);
  set_int8_kernel(best_int8_kernel());
}

TEST(MatmulChoice, AbsentOrAutoMatmulResolvesForTheCpuAndSaysWhy) {
  for (const char* config : {"", "{}", R"({"threads": 1})", R"({"matmul": "auto"})"}) {
    SCOPED_TRACE(config);
    const BackendConfig vnni = parse_config(config, kAvx512Vnni);
    EXPECT_EQ(vnni.forward.matmul, MatmulPath::kInt8);
    EXPECT_EQ(vnni.matmul_label, "auto -> int8 (AVX-512 VNNI)");
    const BackendConfig scalar = parse_config(config, kScalar);
    EXPECT_EQ(scalar.forward.matmul, MatmulPath::kFloat);
    EXPECT_EQ(scalar.matmul_label.rfind("auto -> float (no AVX2", 0), 0u) << scalar.matmul_label;
  }
  EXPECT_EQ(parse_config(nullptr, kAvx2).matmul_label, "auto -> int8 (AVX2)");
}

TEST(MatmulChoice, ExplicitPathsAreKeptWhateverTheCpu) {
  const struct {
    const char* value;
    MatmulPath path;
  } cases[] = {{"float", MatmulPath::kFloat},
               {"int8", MatmulPath::kInt8},
               {"simd", MatmulPath::kSimd},
               {"blas", MatmulPath::kBlas},
               {"simd_blas", MatmulPath::kAuto}};  // the kernels' per-size choice
  for (const auto& c : cases) {
    const std::string config = std::string(R"({"matmul": ")") + c.value + "\"}";
    for (const Int8Kernel f : {kScalar, kAvx512Vnni}) {
      const BackendConfig b = parse_config(config.c_str(), f);
      EXPECT_EQ(b.forward.matmul, c.path) << config;
      EXPECT_EQ(b.matmul_label, c.value);
    }
  }
}

// The host refuses an unknown path before create() (kConfigSchema's enum), naming the allowed
// ones; created without the host, parse_config still refuses it, naming the key.
TEST(MatmulChoice, AnUnknownPathIsRefusedNamingTheAllowedOnes) {
  const std::string m = test::host_config(kConfigSchema, R"({"matmul": "fast"})").error;
  EXPECT_EQ(m.rfind("plugins[1].config.matmul: ", 0), 0u) << m;
  EXPECT_NE(m.find("\"fast\""), std::string::npos) << m;
  for (const char* v : {"auto", "float", "int8", "simd", "blas", "simd_blas"}) {
    EXPECT_NE(m.find(std::string("\"") + v + "\""), std::string::npos) << v << ": " << m;
  }
  EXPECT_THROW(parse_config(R"({"matmul": "fast"})", kAvx2), std::invalid_argument);
}

// What passes the host's check (defaults filled) reads as the same config.
TEST(MatmulChoice, TheHostsFilledConfigReadsAsGiven) {
  const auto passed = test::host_config(kConfigSchema, R"({"threads": 3})");
  ASSERT_EQ(passed.error, "");
  const BackendConfig c = parse_config(passed.text.c_str(), kAvx2);
  EXPECT_EQ(c.forward.threads, 3);
  EXPECT_EQ(c.forward.max_batch_tokens, 2048);
  EXPECT_EQ(c.forward.kv_dtype, KvDtype::kF32);
  EXPECT_EQ(c.matmul_label, "auto -> int8 (AVX2)");
}

}  // namespace
}  // namespace plinth::cpu
