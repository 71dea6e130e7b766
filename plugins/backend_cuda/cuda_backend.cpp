#include "cuda_backend.hpp"

#include <algorithm>
#include <cstring>
#include <stdexcept>
#include <string>

#include "batch_check.hpp"
#include "device_check.hpp"
#include "memory_plan.hpp"
#include "plinth/ext_cuda.h"
#include "plinth/ext_early_exit.h"

namespace plinth::cuda {
namespace {

using sdk::Error;

// cuBLAS workspace: set once so no call allocates (CUDA Graph capture; cuBLAS docs,
// "cublasSetWorkspace"); 32 MiB as NVIDIA recommends for Hopper.
constexpr size_t kBlasWorkspace = 32u << 20;
// Granularity memory_info sizes the pool in before the block size is known (kv_paged's default).
constexpr uint64_t kProbeBlockTokens = 16;

const plinth_model_desc& require_model(const plinth_create_args& args) {
  if (args.model == nullptr) {
    throw Error(PLINTH_ERR_INVALID_ARGUMENT,
                "backend_cuda: create needs args->model (the host passes the loaded model)");
  }
  return *args.model;
}

std::string mib(uint64_t bytes) {
  return std::to_string((bytes + (1u << 19)) >> 20) + " MiB";
}

// Checks the configured device and makes it current; throws UNSUPPORTED with check_device's
// message (no device / ordinal out of range / compute capability below 9.0).
void select_device(int requested) {
  int count = 0;
  const cudaError_t e = cudaGetDeviceCount(&count);
  if (e != cudaSuccess) {
    cudaGetLastError();  // clear the sticky error of a failed driver probe
    count = 0;
  }
  std::string msg = check_device_index(count, requested);
  if (msg.empty()) {
    int major = 0, minor = 0;
    check(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, requested),
          "cudaDeviceGetAttribute");
    check(cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, requested),
          "cudaDeviceGetAttribute");
    msg = check_device(count, requested, major, minor);
  }
  if (!msg.empty()) {
    if (e != cudaSuccess && count == 0) {
      msg += std::string(" (cudaGetDeviceCount: ") + cudaGetErrorName(e) + ")";
    }
    throw Error(PLINTH_ERR_UNSUPPORTED, "backend_cuda: " + msg);
  }
  check(cudaSetDevice(requested), "cudaSetDevice(" + std::to_string(requested) + ")");
}

void destroy_meta(MetaBuffers& m) {
  if (m.uploaded != nullptr) cudaEventDestroy(m.uploaded);
  m = MetaBuffers{};
}

[[noreturn]] void bad_static(const std::string& field, const std::string& why) {
  throw std::invalid_argument("load_static: batch." + field + " " + why);
}

// load_static's padding rows [real, num_seqs) of `b`: no slot, ids and positions in range, their
// block table entries in bounds (they are read, never written).
void check_padding_rows(const plinth_batch& b, uint32_t real, const ModelShape& s,
                        uint32_t block_size, uint32_t num_blocks) {
  for (uint32_t i = real; i < b.num_seqs; ++i) {
    // Appended, not "[" + ... + "]": GCC 12's -Wrestrict misfires on that once inlined here.
    std::string row = "[";
    row += std::to_string(i);
    row += ']';
    if (b.slot_mapping[i] >= 0) bad_static("slot_mapping" + row, ">= 0 after a padding row (< 0)");
    if (b.token_ids[i] < 0 || b.token_ids[i] >= s.vocab)
      bad_static("token_ids" + row, "outside [0, vocab)");
    if (b.positions[i] < 0 || b.positions[i] >= s.context)
      bad_static("positions" + row, "outside [0, context)");
    const int64_t ctx = b.positions[i] + 1;
    const int64_t used = (ctx + block_size - 1) / block_size;
    if (used > b.max_blocks_per_seq)
      bad_static("positions" + row, "needs more blocks than max_blocks_per_seq");
    for (int64_t j = 0; j < used; ++j) {
      const int32_t id = b.block_tables[i * static_cast<uint64_t>(b.max_blocks_per_seq) + j];
      if (id >= static_cast<int32_t>(num_blocks))
        bad_static("block_tables" + row, "names a block >= num_blocks");
    }
  }
}

// ---- the plinth.cuda_stream/1 table; the instance handle is the CudaBackend ------------------

CudaBackend& be(plinth_instance* inst) {
  return sdk::self<CudaBackend>(inst);
}

const plinth_cuda_stream_ext kStreamExt = {
    sizeof(plinth_cuda_stream_ext),
    [](plinth_instance* inst) -> void* { return inst == nullptr ? nullptr : be(inst).stream(); },
    [](plinth_instance* inst, uint32_t max_seqs, uint32_t max_blocks,
       plinth_error* err) -> int32_t {
      if (inst == nullptr)
        return sdk::set_error(err, PLINTH_ERR_INVALID_ARGUMENT, "prepare_static: inst is NULL");
      return sdk::guard(err, [&] { be(inst).prepare_static(max_seqs, max_blocks); });
    },
    [](plinth_instance* inst, const plinth_batch* batch, plinth_error* err) -> int32_t {
      if (inst == nullptr || batch == nullptr) {
        return sdk::set_error(err, PLINTH_ERR_INVALID_ARGUMENT,
                              "load_static: inst and batch must not be NULL");
      }
      return sdk::guard(err, [&] { be(inst).load_static(*batch); });
    },
    [](plinth_instance* inst, uint32_t num_seqs, plinth_error* err) -> int32_t {
      if (inst == nullptr)
        return sdk::set_error(err, PLINTH_ERR_INVALID_ARGUMENT, "forward_static: inst is NULL");
      return sdk::guard(err, [&] { be(inst).forward_static(num_seqs); });
    },
    [](plinth_instance* inst, uint32_t num_logits, plinth_forward_output* out,
       plinth_error* err) -> int32_t {
      if (inst == nullptr || out == nullptr) {
        return sdk::set_error(err, PLINTH_ERR_INVALID_ARGUMENT,
                              "read_logits: inst and out must not be NULL");
      }
      return sdk::guard(err, [&] { sdk::write_out(out, be(inst).read_logits(num_logits)); });
    }};

// The plinth.early_exit/1 table: the decoder loop with fewer layers (layer_skip on the GPU).
const plinth_early_exit_ext kEarlyExit = {
    sizeof(plinth_early_exit_ext),
    [](plinth_instance* inst) -> uint32_t { return inst == nullptr ? 0 : be(inst).num_layers(); },
    [](plinth_instance* inst, const plinth_batch* batch, uint32_t exit_layer,
       plinth_forward_output* out, plinth_error* err) -> int32_t {
      if (inst == nullptr || batch == nullptr || out == nullptr) {
        return sdk::set_error(err, PLINTH_ERR_INVALID_ARGUMENT,
                              "forward_early_exit: inst, batch and out must not be NULL");
      }
      return sdk::guard(
          err, [&] { sdk::write_out(out, be(inst).forward_early_exit(*batch, exit_layer)); });
    }};

}  // namespace

CudaBackend::CudaBackend(const plinth_create_args& args)
    : host_(args.host, args.instance_name != nullptr ? args.instance_name : "backend_cuda"),
      cfg_(parse_cuda_config(args.config_json)) {
  const plinth_model_desc& model = require_model(args);
  // Config, feature and tensor errors before any device work.
  (void)model_shape(model);
  check_weight_types(model);
  select_device(cfg_.device);
  gemm_mode_ = cfg_.invariant_gemm ? kernels::GemmMode::kInvariant : kernels::GemmMode::kFast;
  check(cudaStreamCreateWithFlags(&ctx_.stream, cudaStreamNonBlocking), "cudaStreamCreate");
  stream_ = ctx_.stream;
  check_blas(cublasCreate(&ctx_.blas), "cublasCreate");
  blas_ = ctx_.blas;
  check_blas(cublasSetStream(blas_, stream_), "cublasSetStream");
  blas_workspace_ = DeviceBuffer(kBlasWorkspace, "cuBLAS workspace");
  check_blas(cublasSetWorkspace(blas_, blas_workspace_.as<void>(), kBlasWorkspace),
             "cublasSetWorkspace");

  w_ = upload_weights(model);
  const ModelShape& s = w_.shape;
  const uint64_t T = cfg_.max_num_tokens;
  logits_rows_ = std::min(cfg_.max_num_seqs, cfg_.max_num_tokens);
  const uint64_t L = logits_rows_;
  x_ = DeviceBuffer(T * s.hidden * 4, "activations x");
  xn_ = DeviceBuffer(T * s.hidden * 2, "activations xn");
  qkv_ = DeviceBuffer(T * s.qkv_dim() * 4, "activations qkv");
  attn_ = DeviceBuffer(T * s.q_dim() * 2, "activations attn");
  if (s.post_norms || s.residual_scale != 1.0f) {
    proj_ = DeviceBuffer(T * s.hidden * 4, "activations projection");
  }
  gu_ = DeviceBuffer(T * 2 * s.ffn * 4, "activations gate/up");
  act_ = DeviceBuffer(T * s.ffn * 2, "activations swiglu");
  logits_ = DeviceBuffer(L * s.vocab * 4, "logits");
  ids_ = DeviceBuffer(L * 4, "argmax ids");
  logits_host_ = PinnedBuffer(L * s.vocab * 4, "logits (host)");
  ids_host_ = PinnedBuffer(L * 4, "argmax ids (host)");
  const uint64_t act = x_.bytes() + xn_.bytes() + qkv_.bytes() + attn_.bytes() + proj_.bytes() +
                       gu_.bytes() + act_.bytes() + logits_.bytes() + ids_.bytes();
  host_.info(std::string(model.config.architecture != nullptr ? model.config.architecture : "") +
             ": " + std::to_string(s.n_layers) + " layers, hidden " + std::to_string(s.hidden) +
             ", heads " + std::to_string(s.n_heads) + "/" + std::to_string(s.n_kv_heads) +
             ", vocab " + std::to_string(s.vocab) + "; device " + std::to_string(cfg_.device) +
             ", gemm " + (cfg_.invariant_gemm ? "invariant" : "fast") + "; weights " +
             mib(w_.memory.bytes()) + " bf16, activations " + mib(act) + " (max_num_tokens " +
             std::to_string(cfg_.max_num_tokens) + ", logits rows " + std::to_string(L) + ")");
}

CudaBackend::~CudaBackend() {
  if (stream_ != nullptr) {
    cudaSetDevice(cfg_.device);
    cudaStreamSynchronize(stream_);
  }
  destroy_meta(eager_);
  destroy_meta(static_);
}

void CudaBackend::use_device() const {
  check(cudaSetDevice(cfg_.device), "cudaSetDevice(" + std::to_string(cfg_.device) + ")");
}

void CudaBackend::require_kv(const char* what) const {
  if (kv_.bytes() == 0) {
    throw std::invalid_argument(std::string(what) +
                                ": the KV cache is not allocated (call allocate_kv first)");
  }
}

plinth_kv_layout CudaBackend::kv_layout() const {
  const ModelShape& s = w_.shape;
  plinth_kv_layout l{};
  l.struct_size = sizeof(l);
  l.bytes_per_token = 2ull * s.n_layers * s.n_kv_heads * s.head_dim * 2;
  l.n_layers = static_cast<uint32_t>(s.n_layers);
  l.n_kv_heads = static_cast<uint32_t>(s.n_kv_heads);
  l.head_dim = static_cast<uint32_t>(s.head_dim);
  l.dtype = PLINTH_DTYPE_BF16;
  return l;
}

plinth_memory_info CudaBackend::memory_info() const {
  use_device();
  size_t free_b = 0, total_b = 0;
  check(cudaMemGetInfo(&free_b, &total_b), "cudaMemGetInfo");
  KvPoolPlan plan;
  try {
    plan =
        plan_kv_pool(free_b, cfg_.memory_fraction, kv_layout().bytes_per_token * kProbeBlockTokens);
  } catch (const std::runtime_error& e) {
    throw Error(PLINTH_ERR_OUT_OF_MEMORY, std::string("backend_cuda: ") + e.what());
  }
  plinth_memory_info info{};
  info.struct_size = sizeof(info);
  info.device_kind = PLINTH_DEVICE_CUDA;
  info.free_bytes = plan.bytes;
  info.total_bytes = total_b;
  return info;
}

MetaBuffers CudaBackend::make_meta(const MetaLayout& layout, const std::string& what) {
  MetaBuffers m;
  m.layout = layout;
  m.host = PinnedBuffer(layout.ints() * 4, what + " (host staging)");
  m.device = DeviceBuffer(layout.ints() * 4, what);
  std::memset(m.host.as<void>(), 0, m.host.bytes());
  check(cudaEventCreateWithFlags(&m.uploaded, cudaEventDisableTiming), "cudaEventCreate");
  return m;
}

void CudaBackend::upload(MetaBuffers& m) {
  check(cudaMemcpyAsync(m.device.as<void>(), m.host.as<void>(), m.layout.ints() * 4,
                        cudaMemcpyHostToDevice, stream_),
        "upload batch");
  check(cudaEventRecord(m.uploaded, stream_), "cudaEventRecord");
}

void CudaBackend::allocate_kv(uint32_t num_blocks, uint32_t block_size) {
  if (num_blocks == 0 || block_size == 0) {
    throw std::invalid_argument("allocate_kv: num_blocks = " + std::to_string(num_blocks) +
                                " and block_size = " + std::to_string(block_size) +
                                " must both be >= 1");
  }
  use_device();
  check(cudaStreamSynchronize(stream_), "allocate_kv: cudaStreamSynchronize");
  const ModelShape& s = w_.shape;
  kv_.reset();
  const uint64_t layer = static_cast<uint64_t>(num_blocks) * block_size * s.kv_dim();
  kv_ = DeviceBuffer(2 * layer * s.n_layers * 2, "KV cache (" + std::to_string(num_blocks) +
                                                     " blocks of " + std::to_string(block_size) +
                                                     " tokens)");
  check(cudaMemsetAsync(kv_.as<void>(), 0, kv_.bytes(), stream_), "cudaMemset KV cache");
  layer_elems_ = layer;
  num_blocks_ = num_blocks;
  block_size_ = block_size;
  destroy_meta(eager_);
  destroy_meta(static_);
  static_loaded_ = 0;
  MetaLayout el;
  el.rows = cfg_.max_num_tokens;
  el.logits_rows = logits_rows_;
  el.seqs = cfg_.max_num_seqs;
  el.table_width = (static_cast<uint32_t>(s.context) + block_size - 1) / block_size;
  eager_ = make_meta(el, "batch inputs");
  check(cudaStreamSynchronize(stream_), "allocate_kv");
}

void CudaBackend::enqueue(const MetaBuffers& m, int n, int m_logits, int num_layers) {
  const ModelShape& s = w_.shape;
  const MetaLayout& ml = m.layout;
  const int32_t* base = m.device.as<int32_t>();
  const int32_t* tokens = base + ml.tokens();
  const int32_t* positions = base + ml.positions();
  const int32_t* slots = base + ml.slots();
  const int32_t* token_seq = base + ml.token_seq();
  const int32_t* logits_idx = base + ml.logits_idx();
  const int32_t* tables = base + ml.tables();
  float* x = x_.as<float>();
  uint16_t* xn = xn_.as<uint16_t>();
  float* qkv = qkv_.as<float>();
  uint16_t* attn = attn_.as<uint16_t>();
  float* proj = proj_.as<float>();
  float* gu = gu_.as<float>();
  uint16_t* act = act_.as<uint16_t>();
  const kernels::QkvShape qs{s.n_heads, s.n_kv_heads, s.head_dim, s.qkv_dim()};
  const auto k = [](cudaError_t e, const char* what) { check(e, what); };
  const auto gemm = [&](const uint16_t* in, const uint16_t* wt, float* out, int rows, int N, int K,
                        bool acc) {
    k(kernels::gemm(gemm_mode_, blas_, in, wt, out, rows, N, K, acc, stream_), "gemm");
  };
  // A projection added to the residual stream: accumulated by the GEMM itself, or, with a post
  // norm (post_norms) or a residual scale, into proj_, then normed / scaled onto x.
  const auto residual = [&](const uint16_t* in, const uint16_t* wt, int K, const float* post) {
    if (post == nullptr && s.residual_scale == 1.0f) {
      gemm(in, wt, x, n, s.hidden, K, true);
      return;
    }
    gemm(in, wt, proj, n, s.hidden, K, false);
    k(kernels::residual_add(proj, post, n, s.hidden, s.rms_eps, s.residual_scale, x, stream_),
      "residual_add");
  };
  // A sub-block's input: the RMSNorm of x with `norm`, or x itself (no_pre_norms), as bf16.
  const auto pre_norm = [&](const float* norm) {
    if (norm == nullptr) {
      k(kernels::to_bf16_rows(x, n, s.hidden, xn, stream_), "to_bf16_rows");
      return;
    }
    k(kernels::rmsnorm(x, nullptr, norm, n, s.hidden, s.rms_eps, xn, stream_), "rmsnorm");
  };

  // The generic decoder block: every optional step is a feature of the description.
  k(kernels::embed(w_.token_embd, tokens, n, s.hidden, s.embed_scale, x, stream_), "embed");
  for (int l = 0; l < num_layers; ++l) {
    const LayerWeights& L = w_.layers[static_cast<size_t>(l)];
    const LayerShape& ls = s.layers[static_cast<size_t>(l)];
    uint16_t* kc = kv_.as<uint16_t>() + (2ull * l) * layer_elems_;
    uint16_t* vc = kc + layer_elems_;
    pre_norm(L.attn_norm);
    gemm(xn, L.wqkv, qkv, n, s.qkv_dim(), s.hidden, false);
    kernels::QkvPrep prep;
    prep.bias = L.qkv_bias;
    prep.q_norm = L.q_norm;
    prep.k_norm = L.k_norm;
    prep.qk_full = s.qk_norm_full;
    prep.eps = s.rms_eps;
    prep.rope = ls.rope;
    prep.neox = s.rope_neox;
    prep.rope_dims = s.rope_dims;
    prep.theta = ls.rope_base;
    prep.scale = ls.rope_scale;
    prep.freq_factors = w_.rope_freqs;
    k(kernels::prepare_qkv(qkv, n, qs, prep, positions, slots, kc, vc, stream_), "prepare_qkv");
    const kernels::PagedKv kv{kc, vc, tables, static_cast<int>(ml.table_width),
                              static_cast<int>(block_size_)};
    const kernels::AttnParams ap{s.attn_scale, ls.window};
    k(kernels::attention(qkv, n, qs, ap, positions, token_seq, kv, attn, stream_), "attention");
    residual(attn, L.wo, s.q_dim(), L.post_attn_norm);
    pre_norm(L.ffn_norm);
    gemm(xn, L.wgu, gu, n, 2 * s.ffn, s.hidden, false);
    k(kernels::gated_ffn(gu, n, s.ffn, s.gelu, act, stream_), "gated_ffn");
    residual(act, L.wdown, s.ffn, L.post_ffn_norm);
  }
  if (m_logits == 0) return;
  k(kernels::rmsnorm(x, logits_idx, w_.output_norm, m_logits, s.hidden, s.rms_eps, xn, stream_),
    "rmsnorm");
  float* logits = logits_.as<float>();
  gemm(xn, w_.lm_head, logits, m_logits, s.vocab, s.hidden, false);
  if (s.logit_scale != 1.0f || s.logit_softcap > 0.0f) {
    k(kernels::finish_logits(logits, m_logits, s.vocab, s.logit_scale, s.logit_softcap, stream_),
      "finish_logits");
  }
  k(kernels::argmax_rows(logits, m_logits, s.vocab, ids_.as<int32_t>(), stream_), "argmax");
}

plinth_forward_output CudaBackend::copy_out(uint32_t num_logits, bool argmax_only) {
  const uint64_t vocab = static_cast<uint64_t>(w_.shape.vocab);
  if (num_logits > 0) {
    check(cudaMemcpyAsync(ids_host_.as<void>(), ids_.as<void>(), num_logits * 4ull,
                          cudaMemcpyDeviceToHost, stream_),
          "copy argmax ids");
    if (!argmax_only) {
      check(cudaMemcpyAsync(logits_host_.as<void>(), logits_.as<void>(), num_logits * vocab * 4,
                            cudaMemcpyDeviceToHost, stream_),
            "copy logits");
    }
  }
  check(cudaStreamSynchronize(stream_), "forward (cudaStreamSynchronize)");
  plinth_forward_output out{};
  out.struct_size = sizeof(out);
  out.num_logits = num_logits;
  out.vocab_size = static_cast<uint32_t>(vocab);
  out.logits = argmax_only ? nullptr : logits_host_.as<float>();
  out.logits_device = argmax_only ? nullptr : logits_.as<float>();
  out.argmax_ids = ids_host_.as<int32_t>();
  return out;
}

plinth_forward_output CudaBackend::forward(const plinth_batch& b) {
  return run(b, w_.shape.n_layers);
}

plinth_forward_output CudaBackend::forward_early_exit(const plinth_batch& b, uint32_t exit_layer) {
  const int n_layers = w_.shape.n_layers;
  if (exit_layer < 1 || exit_layer >= static_cast<uint32_t>(n_layers)) {
    throw std::invalid_argument(
        "forward_early_exit: exit_layer = " + std::to_string(exit_layer) + " must lie in [1, " +
        std::to_string(n_layers) + ") (the model has " + std::to_string(n_layers) +
        " layers; exit_layer = " + std::to_string(n_layers) + " is the full model: use forward)");
  }
  return run(b, static_cast<int>(exit_layer));
}

plinth_forward_output CudaBackend::run(const plinth_batch& b, int num_layers) {
  require_kv("forward");
  use_device();
  const ModelShape& s = w_.shape;
  BatchLimits lim;
  lim.vocab = s.vocab;
  lim.context = s.context;
  lim.num_blocks = num_blocks_;
  lim.block_size = block_size_;
  lim.max_num_tokens = cfg_.max_num_tokens;
  lim.max_num_seqs = cfg_.max_num_seqs;
  lim.logits_rows = logits_rows_;
  validate_batch(b, lim);
  const bool argmax_only = wants_argmax_only(b);
  const uint32_t n = b.num_tokens, m = b.num_logits;
  if (n == 0) return copy_out(0, argmax_only);

  // Stage the inputs (the previous upload has finished: every forward ends synchronised).
  MetaBuffers& mb = eager_;
  const MetaLayout& ml = mb.layout;
  int32_t* h = mb.host.as<int32_t>();
  check(cudaEventSynchronize(mb.uploaded), "cudaEventSynchronize");
  std::memcpy(h + ml.tokens(), b.token_ids, n * 4ull);
  std::memcpy(h + ml.positions(), b.positions, n * 4ull);
  std::memcpy(h + ml.slots(), b.slot_mapping, n * 4ull);
  for (uint32_t q = 0; q < b.num_seqs; ++q) {
    for (int32_t t = b.query_start[q]; t < b.query_start[q + 1]; ++t) {
      h[ml.token_seq() + static_cast<uint64_t>(t)] = static_cast<int32_t>(q);
    }
  }
  if (m > 0) std::memcpy(h + ml.logits_idx(), b.logits_indices, m * 4ull);
  // Block tables at the buffer's width: columns past ceil(context / block_size) can never be
  // read (seq_lens <= context), so a wider table is cut and a narrower one padded with -1.
  const uint32_t cols = std::min(b.max_blocks_per_seq, ml.table_width);
  for (uint32_t q = 0; q < b.num_seqs; ++q) {
    int32_t* row = h + ml.tables() + static_cast<uint64_t>(q) * ml.table_width;
    std::memcpy(row, b.block_tables + static_cast<uint64_t>(q) * b.max_blocks_per_seq, cols * 4ull);
    std::fill(row + cols, row + ml.table_width, -1);
  }
  upload(mb);
  enqueue(mb, static_cast<int>(n), static_cast<int>(m), num_layers);
  return copy_out(m, argmax_only);
}

void CudaBackend::copy_blocks(std::span<const plinth_block_copy> copies) {
  require_kv("copy_blocks");
  use_device();
  const uint64_t block_bytes = static_cast<uint64_t>(block_size_) * w_.shape.kv_dim() * 2;
  for (size_t i = 0; i < copies.size(); ++i) {
    const plinth_block_copy& c = copies[i];
    for (const int32_t id : {c.src, c.dst}) {
      if (id < 0 || static_cast<uint32_t>(id) >= num_blocks_) {
        throw std::invalid_argument(
            "copy_blocks: copies[" + std::to_string(i) + "] names block " + std::to_string(id) +
            ", outside [0, num_blocks=" + std::to_string(num_blocks_) + ")");
      }
    }
    if (c.src == c.dst) continue;
    auto* base = kv_.as<unsigned char>();
    for (uint64_t r = 0; r < 2ull * w_.shape.n_layers; ++r) {  // (layer, K|V) regions
      unsigned char* region = base + r * layer_elems_ * 2;
      check(cudaMemcpyAsync(region + c.dst * block_bytes, region + c.src * block_bytes, block_bytes,
                            cudaMemcpyDeviceToDevice, stream_),
            "copy_blocks");
    }
  }
  check(cudaStreamSynchronize(stream_), "copy_blocks");
}

const void* CudaBackend::extension(const char* name) const {
  if (name != nullptr && std::strcmp(name, PLINTH_EXT_CUDA_STREAM) == 0) return &kStreamExt;
  if (name != nullptr && std::strcmp(name, PLINTH_EXT_EARLY_EXIT) == 0) return &kEarlyExit;
  return nullptr;
}

void CudaBackend::prepare_static(uint32_t max_seqs, uint32_t max_blocks_per_seq) {
  require_kv("prepare_static");
  if (max_seqs == 0 || max_seqs > logits_rows_) {
    throw std::invalid_argument("prepare_static: max_seqs = " + std::to_string(max_seqs) +
                                " must lie in [1, " + std::to_string(logits_rows_) +
                                "] (backend_cuda's min(max_num_seqs, max_num_tokens): raise "
                                "max_num_seqs or lower the graph runner's largest capture size)");
  }
  if (max_blocks_per_seq == 0) {
    throw std::invalid_argument("prepare_static: max_blocks_per_seq must be >= 1");
  }
  use_device();
  check(cudaStreamSynchronize(stream_), "prepare_static");
  destroy_meta(static_);
  MetaLayout sl;
  sl.rows = max_seqs;
  sl.logits_rows = max_seqs;
  sl.seqs = max_seqs;
  sl.table_width = max_blocks_per_seq;
  static_ = make_meta(sl, "static decode inputs");
  // Identity rows: token i is sequence i, and every row's logits are computed.
  int32_t* h = static_.host.as<int32_t>();
  for (uint32_t i = 0; i < max_seqs; ++i) {
    h[sl.token_seq() + i] = static_cast<int32_t>(i);
    h[sl.logits_idx() + i] = static_cast<int32_t>(i);
    h[sl.slots() + i] = -1;
  }
  std::fill(h + sl.tables(), h + sl.ints(), -1);
  upload(static_);
  check(cudaStreamSynchronize(stream_), "prepare_static");
  static_loaded_ = 0;
}

void CudaBackend::load_static(const plinth_batch& b) {
  if (static_.device.bytes() == 0) {
    throw std::invalid_argument("load_static: call prepare_static first");
  }
  use_device();
  const MetaLayout& sl = static_.layout;
  const ModelShape& s = w_.shape;
  const uint32_t ns = b.num_seqs;
  if (b.struct_size < offsetof(plinth_batch, argmax_only))
    bad_static("struct_size", "is too small");
  if (ns == 0 || ns > sl.seqs) {
    bad_static("num_seqs", "= " + std::to_string(ns) + " must lie in [1, " +
                               std::to_string(sl.seqs) + "] (prepare_static's max_seqs)");
  }
  if (b.num_tokens != ns) {
    bad_static("num_tokens", "= " + std::to_string(b.num_tokens) +
                                 " must equal num_seqs (a decode batch: one token per sequence)");
  }
  if (b.max_blocks_per_seq > sl.table_width) {
    bad_static("max_blocks_per_seq", "= " + std::to_string(b.max_blocks_per_seq) +
                                         " exceeds prepare_static's " +
                                         std::to_string(sl.table_width));
  }
  if (b.num_logits > ns) bad_static("num_logits", "exceeds num_seqs");
  if (b.token_ids == nullptr || b.positions == nullptr || b.slot_mapping == nullptr ||
      b.query_start == nullptr || b.seq_lens == nullptr || b.block_tables == nullptr) {
    bad_static("arrays", "must not be NULL");
  }
  for (uint32_t i = 0; i <= ns; ++i) {
    if (b.query_start[i] != static_cast<int32_t>(i)) {
      bad_static("query_start[" + std::to_string(i) + "]", "= " + std::to_string(b.query_start[i]) +
                                                               " must be " + std::to_string(i) +
                                                               " (one token per sequence)");
    }
  }
  // Real rows come first; the first slot < 0 starts the padding.
  uint32_t real = 0;
  while (real < ns && b.slot_mapping[real] >= 0) ++real;
  plinth_batch head{};
  std::memcpy(&head, &b, std::min<size_t>(b.struct_size, sizeof head));
  head.struct_size = sizeof head;
  head.num_seqs = real;
  head.num_tokens = real;
  BatchLimits lim;
  lim.vocab = s.vocab;
  lim.context = s.context;
  lim.num_blocks = num_blocks_;
  lim.block_size = block_size_;
  lim.max_num_tokens = sl.rows;
  lim.max_num_seqs = sl.seqs;
  lim.logits_rows = sl.logits_rows;
  if (real > 0) validate_batch(head, lim);
  check_padding_rows(b, real, s, block_size_, num_blocks_);
  for (uint32_t i = 0; i < b.num_logits; ++i) {
    if (b.logits_indices == nullptr || b.logits_indices[i] != static_cast<int32_t>(i)) {
      bad_static("logits_indices[" + std::to_string(i) + "]",
                 "must be " + std::to_string(i) + " (the real rows, in order)");
    }
  }
  int32_t* h = static_.host.as<int32_t>();
  check(cudaEventSynchronize(static_.uploaded), "cudaEventSynchronize");
  std::memcpy(h + sl.tokens(), b.token_ids, ns * 4ull);
  std::memcpy(h + sl.positions(), b.positions, ns * 4ull);
  std::memcpy(h + sl.slots(), b.slot_mapping, ns * 4ull);
  for (uint32_t q = 0; q < ns; ++q) {
    int32_t* row = h + sl.tables() + static_cast<uint64_t>(q) * sl.table_width;
    std::memcpy(row, b.block_tables + static_cast<uint64_t>(q) * b.max_blocks_per_seq,
                b.max_blocks_per_seq * 4ull);
    std::fill(row + b.max_blocks_per_seq, row + sl.table_width, -1);
  }
  upload(static_);
  static_argmax_only_ = wants_argmax_only(b);
  static_loaded_ = ns;
}

void CudaBackend::forward_static(uint32_t num_seqs) {
  if (static_.device.bytes() == 0) {
    throw std::invalid_argument("forward_static: call prepare_static first");
  }
  if (num_seqs == 0 || num_seqs > static_.layout.seqs) {
    throw std::invalid_argument("forward_static: num_seqs = " + std::to_string(num_seqs) +
                                " must lie in [1, " + std::to_string(static_.layout.seqs) +
                                "] (prepare_static's max_seqs)");
  }
  enqueue(static_, static_cast<int>(num_seqs), static_cast<int>(num_seqs), w_.shape.n_layers);
}

plinth_forward_output CudaBackend::read_logits(uint32_t num_logits) {
  if (num_logits > static_loaded_) {
    throw std::invalid_argument("read_logits: num_logits = " + std::to_string(num_logits) +
                                " exceeds the " + std::to_string(static_loaded_) +
                                " rows of the last load_static");
  }
  use_device();
  return copy_out(num_logits, static_argmax_only_);
}

}  // namespace plinth::cuda
