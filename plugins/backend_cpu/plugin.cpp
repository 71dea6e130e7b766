// The backend_cpu plugin library: CpuBackend behind the C ABI (plinth_plugin_entry).
#include "cpu_backend.hpp"
#include "plinth/backend.hpp"

namespace {

const plinth_backend_vtable kTable = plinth::sdk::backend_vtable<plinth::cpu::CpuBackend>();

}  // namespace

PLINTH_PLUGIN("backend_cpu", "0.1.0", PLINTH_KIND_BACKEND,
              "LLaMA forward pass on the CPU (quantized GGUF weights in place, paged KV cache)",
              plinth::cpu::kConfigSchema, &kTable)
