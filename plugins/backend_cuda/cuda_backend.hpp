// backend_cuda as an ordinary C++ class, shaped for plinth::sdk::backend_vtable (backend.hpp),
// plus the "plinth.cuda_stream/1" extension (ext_cuda.h) for CUDA Graph capture.
#pragma once

#include <cstdint>
#include <span>
#include <string>

#include "cuda_config.hpp"
#include "cuda_util.hpp"
#include "device_weights.hpp"
#include "kernels.hpp"
#include "plinth/backend.h"
#include "plinth/plugin.hpp"

namespace plinth::cuda {

/// Where the int32 inputs of one forward lie inside one buffer (host staging and device copy
/// share it, so one cudaMemcpyAsync moves a batch): tokens, positions, slots, token_seq [rows]
/// each, logits_idx [logits_rows], block_tables [seqs, table_width].
struct MetaLayout {
  uint32_t rows = 0, logits_rows = 0, seqs = 0, table_width = 0;
  uint64_t tokens() const { return 0; }
  uint64_t positions() const { return rows; }
  uint64_t slots() const { return 2ull * rows; }
  uint64_t token_seq() const { return 3ull * rows; }
  uint64_t logits_idx() const { return 4ull * rows; }
  uint64_t tables() const { return 4ull * rows + logits_rows; }
  uint64_t ints() const { return tables() + static_cast<uint64_t>(seqs) * table_width; }
};

/// One set of batch inputs: pinned staging, its device copy, and the event that marks the last
/// upload done (the staging may be rewritten after it).
struct MetaBuffers {
  MetaLayout layout;
  PinnedBuffer host;
  DeviceBuffer device;
  cudaEvent_t uploaded = nullptr;
};

/// The stream and cuBLAS handle, destroyed last (also when the constructor throws later).
struct StreamAndBlas {
  cudaStream_t stream = nullptr;
  cublasHandle_t blas = nullptr;
  StreamAndBlas() = default;
  StreamAndBlas(const StreamAndBlas&) = delete;
  StreamAndBlas& operator=(const StreamAndBlas&) = delete;
  ~StreamAndBlas() {
    if (stream != nullptr) cudaStreamSynchronize(stream);
    if (blas != nullptr) cublasDestroy(blas);
    if (stream != nullptr) cudaStreamDestroy(stream);
  }
};

/// The plugin instance (one forward at a time: the host's engine thread). Every method may
/// throw; the SDK adapter converts at the boundary. All device work runs on one stream.
class CudaBackend {
 public:
  /// Parses the config (parse_cuda_config; INVALID_ARGUMENT naming the key), checks the model
  /// (model_shape, check_weight_types: a feature, head_dim or tensor type it cannot run is
  /// UNSUPPORTED, a missing or mis-shaped tensor INVALID_ARGUMENT, each named) and the device
  /// (check_device: UNSUPPORTED "no CUDA device ..." / "device 3 requested, 2 present" /
  /// "compute capability 7.5 unsupported ..."), uploads the weights in bf16 (see
  /// upload_weights) and allocates the activation buffers for max_num_tokens rows and
  /// min(max_num_seqs, max_num_tokens) logits rows (OUT_OF_MEMORY naming the buffer).
  explicit CudaBackend(const plinth_create_args& args);
  ~CudaBackend();
  CudaBackend(const CudaBackend&) = delete;
  CudaBackend& operator=(const CudaBackend&) = delete;

  /// bf16 K and V: bytes_per_token = 2 * n_layers * n_kv_heads * head_dim * 2.
  plinth_kv_layout kv_layout() const;
  /// CUDA; free = floor(cudaMemGetInfo free * memory_fraction) in whole 16-token blocks
  /// (plan_kv_pool), total = the device's memory. OUT_OF_MEMORY "too little device memory ..."
  /// when not one block fits.
  plinth_memory_info memory_info() const;
  /// K and V per layer [num_blocks, block_size, n_kv_heads, head_dim] bf16, zeroed; also the
  /// block-table buffers [max_num_seqs, ceil(context / block_size)]. Replaces an earlier pool
  /// (captured graphs that named the old one must be dropped by their owner).
  void allocate_kv(uint32_t num_blocks, uint32_t block_size);
  /// Validates `batch` (validate_batch: INVALID_ARGUMENT naming the field), uploads it, runs the
  /// model and copies back the argmax ids [num_logits] and, unless batch.argmax_only (ABI 1.3,
  /// read only when struct_size covers it), the logits [num_logits, vocab] f32; synchronous.
  /// Host results stay valid until the next forward / read_logits / allocate_kv / destroy.
  plinth_forward_output forward(const plinth_batch& batch);
  /// Transformer layers of the model (extension plinth.early_exit/1 num_layers).
  uint32_t num_layers() const { return static_cast<uint32_t>(w_.shape.n_layers); }
  /// forward with the model cut after layer exit_layer - 1 (plinth.early_exit/1, ext_early_exit.h:
  /// K/V of layers [0, exit_layer) written, then the final norm and LM head): the same decoder
  /// loop with exit_layer layers. INVALID_ARGUMENT for exit_layer outside [1, num_layers) and
  /// everything forward refuses. Logits and ids on the host as forward's.
  plinth_forward_output forward_early_exit(const plinth_batch& batch, uint32_t exit_layer);
  /// All layers' K and V of block src into dst, in order, on the stream (then synchronised).
  /// INVALID_ARGUMENT for an id outside [0, num_blocks).
  void copy_blocks(std::span<const plinth_block_copy> copies);
  /// PLINTH_EXT_CUDA_STREAM: a plinth_cuda_stream_ext, PLINTH_EXT_EARLY_EXIT: a
  /// plinth_early_exit_ext, each living as long as the library; else NULL.
  const void* extension(const char* name) const;

  // ---- plinth.cuda_stream/1 ----
  /// The cudaStream_t every call enqueues on.
  void* stream() const { return ctx_.stream; }
  /// Static inputs for decode batches of up to max_seqs sequences and max_blocks_per_seq table
  /// entries. INVALID_ARGUMENT when max_seqs exceeds the logits rows (min(max_num_seqs,
  /// max_num_tokens)) or is 0, or allocate_kv was not called.
  void prepare_static(uint32_t max_seqs, uint32_t max_blocks_per_seq);
  /// Copies a decode batch (one token per sequence, padded rows after the real ones: slot -1,
  /// block ids -1) into the static inputs with one asynchronous copy. The real rows (those
  /// before the first slot < 0) are validated like forward's batch; padding rows are checked
  /// to stay in bounds. Remembers batch.argmax_only for read_logits.
  void load_static(const plinth_batch& batch);
  /// Enqueues the forward for num_seqs rows over the static inputs: kernel launches and cuBLAS
  /// calls only (no allocation, no synchronisation), so it can be captured. INVALID_ARGUMENT
  /// when num_seqs exceeds prepare_static's max_seqs.
  void forward_static(uint32_t num_seqs);
  /// Copies ids (and logits unless the loaded batch was argmax_only) of the first num_logits
  /// rows back, synchronises, and returns them as forward does.
  plinth_forward_output read_logits(uint32_t num_logits);

 private:
  void use_device() const;
  void require_kv(const char* what) const;
  MetaBuffers make_meta(const MetaLayout& layout, const std::string& what);
  void upload(MetaBuffers& m);
  // Enqueues the model over n rows whose inputs are in `m`, m_logits rows of logits and ids.
  // The decoder over layers [0, num_layers) (the whole model: n_layers), then the LM head.
  void enqueue(const MetaBuffers& m, int n, int m_logits, int num_layers);
  // forward's body over `num_layers` layers.
  plinth_forward_output run(const plinth_batch& b, int num_layers);
  plinth_forward_output copy_out(uint32_t num_logits, bool argmax_only);

  sdk::Host host_;
  CudaConfig cfg_;
  StreamAndBlas ctx_;
  cudaStream_t stream_ = nullptr;  // ctx_.stream
  cublasHandle_t blas_ = nullptr;  // ctx_.blas
  DeviceBuffer blas_workspace_;
  DeviceWeights w_;
  kernels::GemmMode gemm_mode_ = kernels::GemmMode::kInvariant;
  uint32_t logits_rows_ = 0;
  // Activations, rows = max_num_tokens (logits: logits_rows_).
  DeviceBuffer x_;       // [T, hidden] f32 residual stream
  DeviceBuffer xn_;      // [T, hidden] bf16 RMSNorm output
  DeviceBuffer qkv_;     // [T, qkv_dim] f32
  DeviceBuffer attn_;    // [T, q_dim] bf16
  DeviceBuffer proj_;    // [T, hidden] f32 output of wo / w_down before its post norm / scale
  DeviceBuffer gu_;      // [T, 2 ffn] f32
  DeviceBuffer act_;     // [T, ffn] bf16
  DeviceBuffer logits_;  // [L, vocab] f32
  DeviceBuffer ids_;     // [L] int32
  PinnedBuffer logits_host_;
  PinnedBuffer ids_host_;
  // KV pool and block tables (allocate_kv).
  DeviceBuffer kv_;
  uint32_t num_blocks_ = 0, block_size_ = 0;
  uint64_t layer_elems_ = 0;  // elements of one layer's K (or V)
  MetaBuffers eager_;
  MetaBuffers static_;
  bool static_argmax_only_ = false;
  uint32_t static_loaded_ = 0;  // num_seqs of the last load_static
};

}  // namespace plinth::cuda
