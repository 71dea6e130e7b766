#include "cpu_backend.hpp"

#include "warm_up.hpp"

#include <cmath>
#include <cstring>
#include <fstream>
#include <limits>
#include <nlohmann/json.hpp>
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

BackendConfig parse_config(const char* config_json, Int8Kernel best_int8) {
  BackendConfig c;
  ForwardOptions& o = c.forward;
  const unsigned cores = std::thread::hardware_concurrency();
  o.threads = cores > 0 ? static_cast<int>(cores) : 1;
  // "matmul" absent means "auto": the path and the log label resolved here.
  const MatmulChoice automatic = choose_auto_matmul(best_int8);
  const std::string auto_label =
      std::string("auto -> ") + matmul_path_name(automatic.path) + " (" + automatic.reason + ")";
  o.matmul = automatic.path;
  c.matmul_label = auto_label;
  if (config_json == nullptr || *config_json == '\0') return c;
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(config_json);
  } catch (const nlohmann::json::exception& e) {
    throw std::invalid_argument(std::string("backend_cpu config: not JSON: ") + e.what());
  }
  if (!j.is_object()) throw std::invalid_argument("backend_cpu config: must be a JSON object");
  const auto positive_int = [&](const std::string& key) -> int64_t {
    const auto& v = j.at(key);
    if (!v.is_number_integer() || v.get<int64_t>() < 1) {
      throw std::invalid_argument("backend_cpu config: " + key + " = " + v.dump() +
                                  " must be an integer >= 1");
    }
    return v.get<int64_t>();
  };
  for (const auto& [key, value] : j.items()) {
    if (key == "threads") {
      const int64_t t = positive_int(key);
      if (t > 1024)
        throw std::invalid_argument("backend_cpu config: threads = " + std::to_string(t) +
                                    " must be <= 1024");
      o.threads = static_cast<int>(t);
    } else if (key == "max_batch_tokens") {
      o.max_batch_tokens = positive_int(key);
    } else if (key == "kv_dtype") {
      const std::string d = value.is_string() ? value.get<std::string>() : "";
      if (d == "f32") {
        o.kv_dtype = KvDtype::kF32;
      } else if (d == "f16") {
        o.kv_dtype = KvDtype::kF16;
      } else {
        throw std::invalid_argument("backend_cpu config: kv_dtype = " + value.dump() +
                                    " must be \"f32\" or \"f16\"");
      }
    } else if (key == "matmul") {
      const std::string d = value.is_string() ? value.get<std::string>() : "";
      c.matmul_label = d;
      if (d == "auto") {
        o.matmul = automatic.path;
        c.matmul_label = auto_label;
      } else if (d == "simd_blas") {
        o.matmul = MatmulPath::kAuto;  // the kernels' per-size choice
      } else if (d == "simd") {
        o.matmul = MatmulPath::kSimd;
      } else if (d == "blas") {
        o.matmul = MatmulPath::kBlas;
      } else if (d == "float") {
        o.matmul = MatmulPath::kFloat;
      } else if (d == "int8") {
        o.matmul = MatmulPath::kInt8;
      } else {
        throw std::invalid_argument("backend_cpu config: matmul = " + value.dump() +
                                    " must be \"auto\", \"float\", \"int8\", \"simd\", "
                                    "\"blas\" or \"simd_blas\"");
      }
    } else {
      throw std::invalid_argument("backend_cpu config: unknown key \"" + key +
                                  "\" (allowed: threads, kv_dtype, max_batch_tokens, matmul)");
    }
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
      "llama: " + std::to_string(s.n_layers) + " layers, hidden " + std::to_string(s.hidden) +
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
