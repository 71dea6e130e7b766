#include "matmul_choice.hpp"

namespace plinth::cpu {

MatmulChoice choose_auto_matmul(Int8Kernel best) {
  switch (best) {
    case Int8Kernel::kAvx512Vnni:
      return {MatmulPath::kInt8, "AVX-512 VNNI"};
    case Int8Kernel::kAvxVnni:
      return {MatmulPath::kInt8, "AVX-VNNI"};
    case Int8Kernel::kAvx2:
      return {MatmulPath::kInt8, "AVX2"};
    case Int8Kernel::kScalar:
      break;
  }
  return {MatmulPath::kFloat, "no AVX2: the int8 path would run its scalar kernel"};
}

}  // namespace plinth::cpu
