// backend_cpu's `"matmul": "auto"` (matmul_choice.hpp, parse_config in cpu_backend.hpp): int8
// where the CPU has a vector int8 kernel (AVX-512 VNNI, AVX-VNNI, AVX2), float elsewhere; the
// label the start-up log prints; the other values of `matmul` as the schema lists them.
#include <gtest/gtest.h>

#include <stdexcept>
#include <string>

#include "cpu_backend.hpp"
#include "matmul_choice.hpp"

namespace plinth::cpu {
namespace {

constexpr CpuFeatures kScalar{Isa::Scalar, false, false};
constexpr CpuFeatures kAvx2{Isa::Avx2, false, false};
constexpr CpuFeatures kAvxVnni{Isa::Avx2, false, true};
constexpr CpuFeatures kAvx512NoVnni{Isa::Avx512, false, false};
constexpr CpuFeatures kAvx512Vnni{Isa::Avx512, true, true};  // Zen 4, Sapphire Rapids

TEST(MatmulChoice, AutoIsInt8WithAVectorInt8KernelAndFloatElsewhere) {
  EXPECT_EQ(choose_auto_matmul(kScalar).path, MatmulPath::Float);
  EXPECT_NE(choose_auto_matmul(kScalar).reason.find("no AVX2"), std::string::npos);
  EXPECT_EQ(choose_auto_matmul(kAvx2).path, MatmulPath::Int8);
  EXPECT_EQ(choose_auto_matmul(kAvx2).reason, "AVX2");
  EXPECT_EQ(choose_auto_matmul(kAvxVnni).path, MatmulPath::Int8);
  EXPECT_EQ(choose_auto_matmul(kAvxVnni).reason, "AVX-VNNI");
  EXPECT_EQ(choose_auto_matmul(kAvx512NoVnni).path, MatmulPath::Int8);
  EXPECT_EQ(choose_auto_matmul(kAvx512NoVnni).reason, "AVX2");
  EXPECT_EQ(choose_auto_matmul(kAvx512Vnni).path, MatmulPath::Int8);
  EXPECT_EQ(choose_auto_matmul(kAvx512Vnni).reason, "AVX-512 VNNI");
}

TEST(MatmulChoice, ThisCpusFeaturesAgreeWithTheKernelsIsa) {
  const CpuFeatures f = CpuFeatures::detect();
  EXPECT_EQ(f.isa, best_isa());
  EXPECT_EQ(f.avx512_vnni, cpu_has_avx512_vnni());
  EXPECT_EQ(choose_auto_matmul(f).path,
            has_avx2(best_isa()) ? MatmulPath::Int8 : MatmulPath::Float);
}

TEST(MatmulChoice, AbsentOrAutoMatmulResolvesForTheCpuAndSaysWhy) {
  for (const char* config : {"", "{}", R"({"threads": 1})", R"({"matmul": "auto"})"}) {
    SCOPED_TRACE(config);
    const BackendConfig vnni = parse_config(config, kAvx512Vnni);
    EXPECT_EQ(vnni.forward.matmul, MatmulPath::Int8);
    EXPECT_EQ(vnni.matmul_label, "auto -> int8 (AVX-512 VNNI)");
    const BackendConfig scalar = parse_config(config, kScalar);
    EXPECT_EQ(scalar.forward.matmul, MatmulPath::Float);
    EXPECT_EQ(scalar.matmul_label.rfind("auto -> float (no AVX2", 0), 0u) << scalar.matmul_label;
  }
  EXPECT_EQ(parse_config(nullptr, kAvx2).matmul_label, "auto -> int8 (AVX2)");
}

TEST(MatmulChoice, ExplicitPathsAreKeptWhateverTheCpu) {
  const struct {
    const char* value;
    MatmulPath path;
  } cases[] = {{"float", MatmulPath::Float},
               {"int8", MatmulPath::Int8},
               {"simd", MatmulPath::Simd},
               {"blas", MatmulPath::Blas},
               {"simd_blas", MatmulPath::Auto}};  // the kernels' per-size choice
  for (const auto& c : cases) {
    const std::string config = std::string(R"({"matmul": ")") + c.value + "\"}";
    for (const CpuFeatures& f : {kScalar, kAvx512Vnni}) {
      const BackendConfig b = parse_config(config.c_str(), f);
      EXPECT_EQ(b.forward.matmul, c.path) << config;
      EXPECT_EQ(b.matmul_label, c.value);
    }
  }
}

TEST(MatmulChoice, AnUnknownPathIsRefusedNamingTheAllowedOnes) {
  try {
    parse_config(R"({"matmul": "fast"})", kAvx2);
    FAIL() << "accepted matmul \"fast\"";
  } catch (const std::invalid_argument& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("matmul = \"fast\""), std::string::npos) << m;
    for (const char* v : {"auto", "float", "int8", "simd", "blas", "simd_blas"}) {
      EXPECT_NE(m.find(std::string("\"") + v + "\""), std::string::npos) << v << ": " << m;
    }
  }
}

}  // namespace
}  // namespace plinth::cpu
