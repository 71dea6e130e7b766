// Shared by the GPU test binary (plinth_gpu_tests) and bench/cuda/bench_cuda: the CUDA device
// check (through the driver library, so the binaries need no CUDA toolkit to start), manifests
// written from JSON text, EngineHost loading, greedy generation through the engine and one raw
// backend forward with logits at every position. Header-only; one thread.
#pragma once

#include <dlfcn.h>
#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "app/engine_host.hpp"
#include "runtime/call.hpp"
#include "runtime/host_context.hpp"
#include "runtime/logging.hpp"

namespace plinth::gpu {

namespace fs = std::filesystem;
using Tokens = std::vector<int32_t>;

/// "" when a CUDA device is usable, else one line "no CUDA device: <reason>". Asks the driver
/// (libcuda.so.1: cuInit, cuDeviceGetCount) by dlopen, so it works without a toolkit and never
/// links the CUDA runtime into the binary.
inline std::string cuda_device_problem() {
  void* lib = ::dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (lib == nullptr) return "no CUDA device: libcuda.so.1 cannot be loaded (no NVIDIA driver)";
  using InitFn = int (*)(unsigned);
  using CountFn = int (*)(int*);
  auto init = reinterpret_cast<InitFn>(::dlsym(lib, "cuInit"));
  auto count = reinterpret_cast<CountFn>(::dlsym(lib, "cuDeviceGetCount"));
  if (init == nullptr || count == nullptr) return "no CUDA device: libcuda.so.1 lacks cuInit";
  if (const int rc = init(0); rc != 0) {
    return "no CUDA device: cuInit failed with CUresult " + std::to_string(rc) +
           (rc == 100 ? " (CUDA_ERROR_NO_DEVICE)" : "");
  }
  int n = 0;
  if (count(&n) != 0 || n == 0) return "no CUDA device: the driver reports 0 devices";
  return "";
}

/// Device memory free / total through the driver (cuMemGetInfo_v2 in the calling thread's
/// current context); {0, 0} when unavailable.
inline std::pair<uint64_t, uint64_t> device_memory() {
  void* lib = ::dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (lib == nullptr) return {0, 0};
  using Fn = int (*)(size_t*, size_t*);
  auto get = reinterpret_cast<Fn>(::dlsym(lib, "cuMemGetInfo_v2"));
  size_t free_b = 0, total_b = 0;
  if (get == nullptr || get(&free_b, &total_b) != 0) return {0, 0};
  return {free_b, total_b};
}

/// The synthetic model: $PLINTH_GPU_MODEL, or "" when unset.
inline std::string model_path() {
  const char* p = std::getenv("PLINTH_GPU_MODEL");
  return p != nullptr ? p : "";
}

/// True when PLINTH_GPU_CPU_STAND_IN is set: backend_cpu stands in for backend_cuda and no graph
/// runner is loaded, so the harness itself (batches, block tables, the engine loop) can be checked
/// on a machine without a GPU. Figures made so say nothing about CUDA.
inline bool cpu_stand_in() {
  return std::getenv("PLINTH_GPU_CPU_STAND_IN") != nullptr;
}

/// Plugin entries of the manifests the GPU checks load. Libraries are short names, found through
/// PLINTH_PLUGIN_PATH (the staged plugins/ folder) or this build tree's plugin folder.
inline nlohmann::json cpu_backend();
inline nlohmann::json cuda_backend(const std::string& gemm, double memory_fraction = 0.3) {
  if (cpu_stand_in()) return cpu_backend();
  return {{"kind", "backend"},
          {"library", "backend_cuda"},
          {"config", {{"gemm", gemm}, {"memory_fraction", memory_fraction}}}};
}
inline nlohmann::json cpu_backend() {
  return {{"kind", "backend"},
          {"library", "backend_cpu"},
          {"config", {{"threads", cpu_stand_in() ? 2 : 8}}}};
}
inline nlohmann::json graph_runner() {
  return {{"kind", "graph_runner"}, {"library", "cuda_graph"}};
}

/// A manifest for `model`: `backend` (+ the graph runner), kv_paged with 16-token blocks and the
/// continuous scheduler with `max_num_seqs`.
inline nlohmann::json manifest(const std::string& model, const nlohmann::json& backend,
                               bool with_graph, uint32_t max_num_seqs) {
  nlohmann::json plugins = nlohmann::json::array();
  plugins.push_back(backend);
  plugins.push_back(
      {{"kind", "kv_cache"}, {"library", "kv_paged"}, {"config", {{"block_size", 16}}}});
  plugins.push_back({{"kind", "scheduler"},
                     {"library", "scheduler_continuous"},
                     {"config", {{"max_num_seqs", max_num_seqs}}}});
  if (with_graph && !cpu_stand_in()) plugins.push_back(graph_runner());
  return {{"model", fs::absolute(model).string()}, {"plugins", plugins}};
}

/// An EngineHost loaded from manifest JSON text (written to a private temporary file, removed
/// after loading) with its own HostContext. Throws what EngineHost::load throws.
struct LoadedHost {
  std::unique_ptr<HostContext> context;
  std::unique_ptr<EngineHost> host;
  double load_seconds = 0;  // EngineHost::load, wall
};

inline LoadedHost load_host(const nlohmann::json& m,
                            std::shared_ptr<spdlog::logger> logger = nullptr) {
  std::string dir = (fs::temp_directory_path() / "plinth_gpu.XXXXXX").string();
  if (::mkdtemp(dir.data()) == nullptr) throw std::runtime_error("mkdtemp failed in " + dir);
  const fs::path file = fs::path(dir) / "manifest.json";
  std::ofstream(file) << m.dump(2);
  LoadedHost h;
  h.context =
      std::make_unique<HostContext>(logger ? logger : make_stderr_logger(spdlog::level::warn));
  EngineHost::Options o;
  o.manifest = file;
  const auto t0 = std::chrono::steady_clock::now();
  try {
    h.host = EngineHost::load(o, *h.context);
  } catch (...) {
    fs::remove_all(dir);
    throw;
  }
  h.load_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  fs::remove_all(dir);
  return h;
}

/// `n` prompts of lengths uniform in [min_len, max_len], ids uniform in [3, vocab) (no special
/// tokens), from std::mt19937_64(seed).
inline std::vector<Tokens> random_prompts(size_t n, int min_len, int max_len, uint32_t vocab,
                                          uint64_t seed) {
  std::mt19937_64 g(seed);
  std::vector<Tokens> out(n);
  for (Tokens& t : out) {
    t.resize(static_cast<size_t>(std::uniform_int_distribution<int>(min_len, max_len)(g)));
    for (int32_t& x : t) x = std::uniform_int_distribution<int32_t>(3, int32_t(vocab) - 1)(g);
  }
  return out;
}

/// Greedy (temperature 0, ignore_eos) generation of `max_tokens` per prompt, all queued at once;
/// the generated ids per prompt. `steps` (optional) gets the engine steps taken.
inline std::vector<Tokens> generate(EngineHost& h, const std::vector<Tokens>& prompts,
                                    int32_t max_tokens, uint64_t* steps = nullptr) {
  Engine& e = h.engine();
  std::map<uint64_t, size_t> index;
  for (size_t i = 0; i < prompts.size(); ++i) {
    GenerationRequest r;
    r.prompt = prompts[i];
    r.params.temperature = 0.0f;
    r.params.max_tokens = max_tokens;
    r.params.ignore_eos = true;
    index[e.add_request(std::move(r))] = i;
  }
  std::vector<Tokens> out(prompts.size());
  uint64_t n = 0;
  while (e.has_unfinished()) {
    for (const RequestOutput& o : e.step()) {
      Tokens& t = out[index.at(o.request_id)];
      t.insert(t.end(), o.new_token_ids.begin(), o.new_token_ids.end());
      if (o.finished) e.release(o.request_id);
    }
    ++n;
  }
  if (steps != nullptr) *steps = n;
  return out;
}

/// Runs the backend directly over one flat batch: sequence i gets `new_tokens[i]` appended after
/// `cached[i]` tokens already in its KV blocks (blocks [i * blocks_per_seq, (i+1) *
/// blocks_per_seq) of a pool the host allocated), logits for every new token. Returns
/// [total new tokens, vocab] logits, row-major, in batch order.
inline std::vector<float> forward_all(EngineHost& h, const std::vector<Tokens>& new_tokens,
                                      const std::vector<int32_t>& cached, uint32_t blocks_per_seq) {
  BackendRef backend = h.pipeline().backend();
  const uint32_t bs = 16;  // the manifests' kv_paged block_size
  std::vector<int32_t> ids, pos, qs{0}, lens, tables, slots, logits_idx;
  for (size_t i = 0; i < new_tokens.size(); ++i) {
    for (size_t j = 0; j < new_tokens[i].size(); ++j) {
      const int32_t p = cached[i] + static_cast<int32_t>(j);
      ids.push_back(new_tokens[i][j]);
      pos.push_back(p);
      const int32_t block = static_cast<int32_t>(i * blocks_per_seq) + p / int32_t(bs);
      slots.push_back(block * int32_t(bs) + p % int32_t(bs));
      logits_idx.push_back(static_cast<int32_t>(logits_idx.size()));
    }
    qs.push_back(static_cast<int32_t>(ids.size()));
    lens.push_back(cached[i] + static_cast<int32_t>(new_tokens[i].size()));
    for (uint32_t b = 0; b < blocks_per_seq; ++b) {
      tables.push_back(static_cast<int32_t>(i * blocks_per_seq + b));
    }
  }
  plinth_batch batch{};
  batch.struct_size = sizeof(batch);
  batch.num_tokens = static_cast<uint32_t>(ids.size());
  batch.num_seqs = static_cast<uint32_t>(new_tokens.size());
  batch.token_ids = ids.data();
  batch.positions = pos.data();
  batch.query_start = qs.data();
  batch.seq_lens = lens.data();
  batch.block_tables = tables.data();
  batch.max_blocks_per_seq = blocks_per_seq;
  batch.block_size = bs;
  batch.slot_mapping = slots.data();
  batch.num_logits = static_cast<uint32_t>(logits_idx.size());
  batch.logits_indices = logits_idx.data();
  plinth_forward_output out{};
  out.struct_size = sizeof(out);
  call("backend.forward",
       [&](plinth_error* e) { return backend.vtable->forward(backend.instance, &batch, &out, e); });
  if (out.logits == nullptr) throw std::runtime_error("backend.forward returned no logits");
  return {out.logits, out.logits + size_t{out.num_logits} * out.vocab_size};
}

}  // namespace plinth::gpu
