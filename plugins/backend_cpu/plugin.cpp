// The backend_cpu plugin library: CpuBackend behind the C ABI (plinth_plugin_entry).
#include "cpu_backend.hpp"
#include "plinth/backend.hpp"

namespace {

constexpr const char* kSchema = R"json({
  "type": "object",
  "additionalProperties": false,
  "properties": {
    "threads": {"type": "integer", "minimum": 1, "maximum": 1024,
                "description": "compute threads, the engine thread included (default: the number of cores)"},
    "kv_dtype": {"type": "string", "enum": ["f32", "f16"], "default": "f32",
                 "description": "element type of the KV cache"},
    "max_batch_tokens": {"type": "integer", "minimum": 1, "default": 2048,
                         "description": "largest num_tokens of one forward; sizes the activation scratch"},
    "matmul": {"type": "string", "enum": ["auto", "float", "int8", "simd", "blas", "simd_blas"], "default": "auto",
               "description": "auto (default): int8 where the CPU runs the int8 path with a vector kernel (AVX-512 VNNI, AVX-VNNI or AVX2), float elsewhere; the start-up log names the choice and why. float: f32 activations, batch-invariant and f32-accurate (greedy output equals the float reference); int8: int8-quantized activations (llama.cpp scheme) with integer dot products over weights packed at load, batch-invariant, the fastest path on VNNI CPUs, logits ~1 away from the float reference; simd: int8-quantized activations (llama.cpp scheme), batch-invariant, logits ~1 away from the float reference; blas: weights dequantized to f32 + sgemm (f32-accurate, slow decode); simd_blas: the kernels' per-size choice between simd and blas (logits depend on chunking)"}
  }
})json";

const plinth_backend_vtable kTable = plinth::sdk::backend_vtable<plinth::cpu::CpuBackend>();

}  // namespace

PLINTH_PLUGIN("backend_cpu", "0.1.0", PLINTH_KIND_BACKEND,
              "LLaMA forward pass on the CPU (quantized GGUF weights in place, paged KV cache)",
              kSchema, &kTable)
