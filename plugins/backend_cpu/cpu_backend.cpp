#include "cpu_backend.hpp"

#include "warm_up.hpp"

#include <cmath>
#include <cstring>
#include <fstream>
#include <limits>
#include <optional>
#include <plinth/config.hpp>
#include <sstream>
#include <stdexcept>
#include <thread>

#include "isa.hpp"
#include "matmul_choice.hpp"

// The early-exit extension is ABI 1.2; a build against older headers (tests/plugins/abi_compat
// rebuilds this plugin against the frozen 1.0 ones) offers no extension.
#if __has_include(<plinth/ext_early_exit.h>)
#include <plinth/ext_early_exit.h>
#endif

namespace plinth::cpu {
namespace {

const plinth_model_desc& require_model(const plinth_create_args& args) {
  if (args.model == nullptr) {
    throw sdk::Error(PLINTH_ERR_INVALID_ARGUMENT,
                     "backend_cpu: create needs args->model (the host passes the loaded model)");
  }
  return *args.model;
}

const char* kv_dtype_name(KvDtype d) {
  return d == KvDtype::kF32 ? "f32" : "f16";
}

#if PLINTH_ABI_MINOR >= 3
// The argmax of one logits row, the lowest id on ties; -1 when the row holds NaN or +inf
// (backend.h, plinth_forward_output.argmax_ids).
int32_t argmax_row(std::span<const float> row) {
  size_t best = 0;
  bool finite = true;
  for (size_t i = 0; i < row.size(); ++i) {
    const float v = row[i];
    finite = finite && !std::isnan(v) && v != std::numeric_limits<float>::infinity();
    if (v > row[best]) best = i;  // strict: the lowest id wins ties
  }
  return finite ? static_cast<int32_t>(best) : -1;
}
#endif

plinth_forward_output host_logits(const float* logits, uint32_t num_logits, int64_t vocab) {
  plinth_forward_output out{};
  out.struct_size = sizeof(out);
  out.logits = logits;
  out.num_logits = num_logits;
  out.vocab_size = static_cast<uint32_t>(vocab);
  out.logits_device = nullptr;
  return out;
}

#ifdef PLINTH_EXT_EARLY_EXIT
// The plinth.early_exit/1 table; the instance handle is the CpuBackend (sdk::lifecycle).
const plinth_early_exit_ext kEarlyExit = {
    sizeof(plinth_early_exit_ext),
    [](plinth_instance* inst) -> uint32_t { return sdk::self<CpuBackend>(inst).num_layers(); },
    [](plinth_instance* inst, const plinth_batch* batch, uint32_t exit_layer,
       plinth_forward_output* out, plinth_error* err) -> int32_t {
      if (inst == nullptr || batch == nullptr || out == nullptr) {
        return sdk::set_error(err, PLINTH_ERR_INVALID_ARGUMENT,
                              "forward_early_exit: inst, batch and out must not be NULL");
      }
      return sdk::guard(err, [&] {
        sdk::write_out(out, sdk::self<CpuBackend>(inst).forward_early_exit(*batch, exit_layer));
      });
    }};
#endif

}  // namespace

// clang-format off
const char* const kConfigSchema = R"json({
  "type": "object",
  "additionalProperties": false,
  "properties": {
    "threads": {"type": "integer", "minimum": 1, "maximum": 1024,
                "description": "compute threads, the engine thread included (default: the number of cores)"},
    "kv_dtype": {"type": "string", "enum": ["f32", "f16"], "default": "f32",
                 "description": "element type of the KV cache"},
    "max_batch_tokens": {"type": "integer", "minimum": 1, "maximum": 1048576, "default": 2048,
                         "description": "largest num_tokens of one forward; sizes the activation scratch"},
    "matmul": {"type": "string", "enum": ["auto", "float", "int8", "simd", "blas", "simd_blas"], "default": "auto",
               "description": "auto (default): int8 where the CPU runs the int8 path with a vector kernel (AVX-512 VNNI, AVX-VNNI or AVX2), float elsewhere; the start-up log names the choice and why. float: f32 activations, batch-invariant and f32-accurate (greedy output equals the float reference); int8: int8-quantized activations (llama.cpp scheme) with integer dot products over weights packed at load, batch-invariant, the fastest path on VNNI CPUs, logits ~1 away from the float reference; simd: int8-quantized activations (llama.cpp scheme), batch-invariant, logits ~1 away from the float reference; blas: weights dequantized to f32 + sgemm (f32-accurate, slow decode); simd_blas: the kernels' per-size choice between simd and blas (logits depend on chunking)"}
  }
})json";
// clang-format on

BackendConfig parse_config(const char* config_json, Int8Kernel best_int8) {
  // Types, ranges, enums and keys are kConfigSchema's, checked by the host before create().
  const sdk::ConfigReader config("backend_cpu", config_json);
  BackendConfig c;
  ForwardOptions& o = c.forward;
  const unsigned cores = std::thread::hardware_concurrency();
  o.threads = config.get<int>("threads", cores > 0 ? static_cast<int>(cores) : 1);
  o.max_batch_tokens = config.get<int64_t>("max_batch_tokens", o.max_batch_tokens);
  o.kv_dtype = config.get_enum<KvDtype>(
      "kv_dtype", {{"f32", KvDtype::kF32}, {"f16", KvDtype::kF16}}, o.kv_dtype);
  // "matmul" absent or "auto" (nullopt here): the path and the log label resolved for this CPU.
  // "simd_blas" is the kernels' per-size choice, MatmulPath::kAuto.
  const std::optional<MatmulPath> path =
      config.get_enum<std::optional<MatmulPath>>("matmul",
                                                 {{"auto", std::nullopt},
                                                  {"float", MatmulPath::kFloat},
                                                  {"int8", MatmulPath::kInt8},
                                                  {"simd", MatmulPath::kSimd},
                                                  {"blas", MatmulPath::kBlas},
                                                  {"simd_blas", MatmulPath::kAuto}},
                                                 std::nullopt);
  if (path.has_value()) {
    o.matmul = *path;
    c.matmul_label = config.get<std::string>("matmul");
  } else {
    const MatmulChoice automatic = choose_auto_matmul(best_int8);
    o.matmul = automatic.path;
    c.matmul_label =
        std::string("auto -> ") + matmul_path_name(automatic.path) + " (" + automatic.reason + ")";
  }
  return c;
}

MemInfo read_meminfo(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw std::runtime_error("backend_cpu: cannot read " + path);
  MemInfo m;
  bool have_total = false, have_avail = false;
  std::string line;
  while (std::getline(in, line)) {
    std::istringstream ls(line);
    std::string key;
    uint64_t kb = 0;
    if (!(ls >> key >> kb)) continue;
    if (key == "MemTotal:") {
      m.total = kb * 1024;
      have_total = true;
    } else if (key == "MemAvailable:") {
      m.available = kb * 1024;
      have_avail = true;
    }
  }
  if (!have_total || !have_avail) {
    throw std::runtime_error("backend_cpu: " + path + " lacks MemTotal or MemAvailable");
  }
  return m;
}

CpuBackend::CpuBackend(const plinth_create_args& args)
    : CpuBackend(args, parse_config(args.config_json)) {}

CpuBackend::CpuBackend(const plinth_create_args& args, const BackendConfig& config)
    : host_(args.host, args.instance_name != nullptr ? args.instance_name : "backend_cpu"),
      forward_(require_model(args), config.forward) {
  const LlamaShape& s = forward_.shape();
  host_.info(
      s.architecture + (s.features != 0 ? " (" + sdk::arch_feature_names(s.features) + ")" : "") +
      ": " + std::to_string(s.n_layers) + " layers, hidden " + std::to_string(s.hidden) +
      ", heads " + std::to_string(s.n_heads) + "/" + std::to_string(s.n_kv_heads) + ", vocab " +
      std::to_string(s.vocab) + "; threads " + std::to_string(forward_.options().threads) +
      ", kv_dtype " + kv_dtype_name(forward_.options().kv_dtype) + ", max_batch_tokens " +
      std::to_string(forward_.options().max_batch_tokens) + ", matmul " + config.matmul_label);
  if (forward_.options().matmul == MatmulPath::kInt8) {
    const Int8Kernel k = int8_kernel();
    if (k == Int8Kernel::kScalar) {
      host_.warn(
          "matmul int8: kernel scalar (this CPU lacks AVX2, or PLINTH_INT8_KERNEL chose it): the "
          "int8 path runs its portable kernel (same results, an order of magnitude slower); use "
          "\"float\" here");
    } else {
      host_.info(std::string("matmul int8: kernel ") + int8_kernel_name(k));
    }
  }
}

plinth_kv_layout CpuBackend::kv_layout() const {
  const LlamaShape& s = forward_.shape();
  plinth_kv_layout l{};
  l.struct_size = sizeof(l);
  l.bytes_per_token = forward_.kv().bytes_per_token();
  l.n_layers = static_cast<uint32_t>(s.n_layers);
  l.n_kv_heads = static_cast<uint32_t>(s.n_kv_heads);
  l.head_dim = static_cast<uint32_t>(s.head_dim);
  l.dtype = forward_.kv().plinth_dtype();
  return l;
}

plinth_memory_info CpuBackend::memory_info() const {
  const MemInfo m = read_meminfo();
  plinth_memory_info info{};
  info.struct_size = sizeof(info);
  info.device_kind = PLINTH_DEVICE_CPU;
  info.free_bytes = m.available;
  info.total_bytes = m.total;
  return info;
}

void CpuBackend::allocate_kv(uint32_t num_blocks, uint32_t block_size) {
  forward_.kv().allocate(num_blocks, block_size);
  warm_up(forward_);
}

plinth_forward_output CpuBackend::forward(const plinth_batch& batch) {
  plinth_forward_output out =
      host_logits(forward_.forward(batch), batch.num_logits, forward_.shape().vocab);
#if PLINTH_ABI_MINOR >= 3
  // ABI 1.3: a greedy-only batch also gets the argmax ids (one pass per row, cheaper than the
  // host sampler's copy of the row); the logits stay available.
  if (PLINTH_HAS_FIELD(&batch, plinth_batch, argmax_only) && batch.argmax_only != 0) {
    argmax_.resize(batch.num_logits);
    for (uint32_t r = 0; r < batch.num_logits; ++r) {
      // cppcheck-suppress constStatement ; a false positive: the element is assigned
      argmax_[r] = argmax_row(
          std::span<const float>(out.logits + size_t{r} * out.vocab_size, out.vocab_size));
    }
    out.argmax_ids = argmax_.data();
  }
#endif
  return out;
}

plinth_forward_output CpuBackend::forward_early_exit(const plinth_batch& batch,
                                                     uint32_t exit_layer) {
  return host_logits(forward_.forward_early_exit(batch, exit_layer), batch.num_logits,
                     forward_.shape().vocab);
}

const void* CpuBackend::extension(const char* name) const {
#ifdef PLINTH_EXT_EARLY_EXIT
  if (name != nullptr && std::strcmp(name, PLINTH_EXT_EARLY_EXIT) == 0) return &kEarlyExit;
#endif
  return nullptr;
}

void CpuBackend::copy_blocks(std::span<const plinth_block_copy> copies) {
  if (!forward_.kv().allocated()) {
    throw std::invalid_argument("copy_blocks: the KV cache is not allocated (call allocate_kv)");
  }
  for (const plinth_block_copy& c : copies) forward_.kv().copy_block(c.src, c.dst);
}

}  // namespace plinth::cpu
