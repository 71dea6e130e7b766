// The backend_cuda plugin library: CudaBackend behind the C ABI (plinth_plugin_entry).
#include "cuda_backend.hpp"
#include "plinth/backend.hpp"

namespace {

const plinth_backend_vtable kTable = plinth::sdk::backend_vtable<plinth::cuda::CudaBackend>();

}  // namespace

PLINTH_PLUGIN("backend_cuda", "0.1.0", PLINTH_KIND_BACKEND,
              "LLaMA forward pass on an NVIDIA GPU (sm_90): bf16 weights, paged KV, "
              "batch-invariant GEMM or cuBLAS, device greedy ids, CUDA Graph extension",
              plinth::cuda::kCudaConfigSchema, &kTable)
