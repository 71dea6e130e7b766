#include "graph_runner.hpp"

#include <chrono>
#include <cstdio>
#include <stdexcept>

#include "plinth/backend.h"

namespace plinth::cuda_graph {

namespace {

std::string mib(double bytes) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%.1f MiB", bytes / (1 << 20));
  return buf;
}

}  // namespace

GraphRunner::GraphRunner(const plinth_create_args& args, std::unique_ptr<GraphDriver> driver)
    : host_(args.host, args.instance_name != nullptr ? args.instance_name : "cuda_graph"),
      config_(parse_config(args.config_json != nullptr ? args.config_json : "")),
      backend_(args.backend.instance),
      kv_cache_(args.kv_cache),
      driver_(std::move(driver)) {
  if (driver_ == nullptr) throw std::invalid_argument("cuda_graph: no graph driver");
  const plinth_backend_vtable* b = args.backend.vtable;
  if (b != nullptr && b->lifecycle.get_extension != nullptr) {
    ext_ = static_cast<const plinth_cuda_stream_ext*>(
        b->lifecycle.get_extension(backend_, PLINTH_EXT_CUDA_STREAM));
  }
  if (ext_ == nullptr || !PLINTH_HAS_FIELD(ext_, plinth_cuda_stream_ext, read_logits) ||
      ext_->get_stream == nullptr || ext_->prepare_static == nullptr ||
      ext_->load_static == nullptr || ext_->forward_static == nullptr ||
      ext_->read_logits == nullptr) {
    throw sdk::Error(PLINTH_ERR_UNSUPPORTED,
                     std::string("cuda_graph: the backend does not offer the complete \"") +
                         PLINTH_EXT_CUDA_STREAM +
                         "\" extension: use a CUDA backend (backend_cuda) or remove the "
                         "graph_runner from the manifest");
  }
  if (args.model != nullptr) context_length_ = args.model->config.context_length;
  if (context_length_ == 0 && config_.max_blocks_per_seq == 0) {
    throw std::invalid_argument(
        "cuda_graph: the block-table width of the graphs is unknown: the host passed no model "
        "(context_length); set config.max_blocks_per_seq");
  }
  std::string sizes;
  for (uint32_t s : config_.capture_sizes) {
    if (!sizes.empty()) sizes += ',';
    sizes += std::to_string(s);
  }
  host_.info("capture sizes {" + sizes + "} (" +
             (config_.eager_capture ? "eager: all at start-up" : "lazy: each on first use") + ")");
}

uint32_t GraphRunner::width_for(uint32_t block_size) const {
  if (config_.max_blocks_per_seq != 0) return config_.max_blocks_per_seq;
  if (block_size == 0) return 0;
  return (context_length_ + block_size - 1) / block_size;
}

void GraphRunner::ensure_static(uint32_t block_size) {
  if (prepared_) return;
  if (block_size == 0) throw std::invalid_argument("cuda_graph: block_size 0");
  const uint32_t width = width_for(block_size);
  plinth_error err = sdk::new_error();
  sdk::check_call(ext_->prepare_static(backend_, config_.max_capture_size(), width, &err), err,
                  "cuda_graph: backend prepare_static");
  shape_ = {config_.max_capture_size(), width, block_size};
  prepared_ = true;
  host_.info("static buffers for " + std::to_string(shape_.max_seqs) + " sequences, block tables " +
             std::to_string(width) + " blocks of " + std::to_string(block_size) + " tokens");
}

void GraphRunner::capture() {
  if (kv_cache_.vtable != nullptr && kv_cache_.instance != nullptr) {
    plinth_kv_info info{};
    info.struct_size = sizeof(info);
    plinth_error err = sdk::new_error();
    sdk::check_call(kv_cache_.vtable->get_info(kv_cache_.instance, &info, &err), err,
                    "cuda_graph: kv_cache.get_info");
    ensure_static(info.block_size);
  }
  if (!config_.eager_capture) return;
  if (!prepared_) {
    throw std::invalid_argument(
        "cuda_graph: eager_capture needs the KV block size before the first batch, but the host "
        "passed no kv_cache: set eager_capture to false");
  }
  const auto t0 = std::chrono::steady_clock::now();
  const DeviceMemory before = driver_->memory();
  for (uint32_t size : config_.capture_sizes) {
    if (graphs_.count(size) != 0) continue;
    plinth_error err = sdk::new_error();
    sdk::check_call(
        ext_->load_static(backend_,
                          &padded_.build_dummy(size, shape_.max_blocks_per_seq, shape_.block_size),
                          &err),
        err, "cuda_graph: backend load_static");
    capture_size(size);
  }
  const DeviceMemory after = driver_->memory();
  const double ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  host_.info("captured " + std::to_string(graphs_.size()) + " decode graphs in " +
             std::to_string(static_cast<int64_t>(ms)) + " ms; graph memory " +
             mib(double(after.graph_pool_bytes) - double(before.graph_pool_bytes)) +
             " in the graph pool, device free memory " +
             mib(double(before.free_bytes) - double(after.free_bytes)) + " lower");
}

uint32_t GraphRunner::capture_size(uint32_t size) {
  void* stream = ext_->get_stream(backend_);
  plinth_error err = sdk::new_error();
  // Warm-up: the first run of the kernels outside capture (lazy module loading, cuBLAS
  // workspaces) must not happen inside it.
  sdk::check_call(ext_->forward_static(backend_, size, &err), err,
                  "cuda_graph: backend forward_static (warm-up)");
  const DeviceMemory before = driver_->memory();
  const auto t0 = std::chrono::steady_clock::now();
  const uint32_t graph = driver_->capture(stream, [&] {
    plinth_error e = sdk::new_error();
    sdk::check_call(ext_->forward_static(backend_, size, &e), e,
                    "cuda_graph: backend forward_static (capture)");
  });
  const double ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  const DeviceMemory after = driver_->memory();
  graphs_[size] = graph;
  char buf[64];
  std::snprintf(buf, sizeof(buf), "%.2f ms", ms);
  host_.info("captured the decode graph for " + std::to_string(size) + " sequences in " + buf +
             "; graph memory " +
             mib(double(after.graph_pool_bytes) - double(before.graph_pool_bytes)) +
             " in the graph pool, device free memory " +
             mib(double(before.free_bytes) - double(after.free_bytes)) + " lower");
  return graph;
}

bool GraphRunner::can_run(const plinth_batch& batch) {
  try {
    StaticShape shape = shape_;
    if (!prepared_) shape = {config_.max_capture_size(), width_for(batch.block_size), 0};
    const std::string why = eager_reason(batch, config_.capture_sizes, shape);
    if (!why.empty() && host_.log_enabled(PLINTH_LOG_DEBUG)) host_.debug("eager step: " + why);
    return why.empty();
  } catch (...) {
    return false;
  }
}

plinth_forward_output GraphRunner::run(const plinth_batch& batch) {
  if (!prepared_) ensure_static(batch.block_size);
  const std::string why = eager_reason(batch, config_.capture_sizes, shape_);
  if (!why.empty()) {
    throw std::invalid_argument("cuda_graph: run: this batch cannot be replayed (" + why +
                                "); call can_run first and use the backend's forward");
  }
  const uint32_t size = *choose_capture_size(config_.capture_sizes, batch.num_seqs);
  plinth_error err = sdk::new_error();
  sdk::check_call(
      ext_->load_static(backend_, &padded_.build(batch, size, shape_.max_blocks_per_seq), &err),
      err, "cuda_graph: backend load_static");
  auto it = graphs_.find(size);
  const uint32_t graph = it != graphs_.end() ? it->second : capture_size(size);
  driver_->launch(graph, ext_->get_stream(backend_));
  plinth_forward_output out{};
  out.struct_size = sizeof(out);
  sdk::check_call(ext_->read_logits(backend_, batch.num_logits, &out, &err), err,
                  "cuda_graph: backend read_logits");
  num_replays_++;
  return out;
}

std::vector<uint32_t> GraphRunner::captured_sizes() const {
  std::vector<uint32_t> s;
  for (const auto& [size, graph] : graphs_) s.push_back(size);
  return s;
}

}  // namespace plinth::cuda_graph
