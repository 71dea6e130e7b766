#include "matmul_choice.hpp"

namespace plinth::cpu {

MatmulChoice choose_auto_matmul(Int8Kernel best) {
  switch (best) {
    case Int8Kernel::Avx512Vnni:
      return {MatmulPath::Int8, "AVX-512 VNNI"};
    case Int8Kernel::AvxVnni:
      return {MatmulPath::Int8, "AVX-VNNI"};
    case Int8Kernel::Avx2:
      return {MatmulPath::Int8, "AVX2"};
    case Int8Kernel::Scalar:
      break;
  }
  return {MatmulPath::Float, "no AVX2: the int8 path would run its scalar kernel"};
}

}  // namespace plinth::cpu
