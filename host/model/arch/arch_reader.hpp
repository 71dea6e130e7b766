// What every architecture adapter (host/model/arch/<arch>.cpp) uses: typed access to the
// `<arch>.*` keys with errors naming the key, the keys an adapter consumed (so a key whose math
// no adapter implements is refused, never ignored), and the hyper-parameters every decoder-only
// architecture shares.
#pragma once

#include <cstdint>
#include <optional>
#include <set>
#include <string>

#include "model/gguf.hpp"
#include "model/model_config.hpp"

namespace plinth::arch {

/// Reads `<arch>.<suffix>` keys of one file. Every key read (or consumed) is recorded.
class ArchReader {
 public:
  ArchReader(const GgufFile& f, std::string arch) : f_(f), arch_(std::move(arch)) {}

  const GgufFile& file() const { return f_; }
  const std::string& arch() const { return arch_; }
  std::string key(const std::string& suffix) const { return arch_ + "." + suffix; }
  bool has(const std::string& suffix) const { return f_.has(key(suffix)); }

  /// A required integer in 1..2^32-1.
  uint32_t u32(const std::string& suffix) const;
  uint32_t u32_or(const std::string& suffix, uint32_t fallback) const;
  /// An optional float (f32 or f64).
  std::optional<double> f64(const std::string& suffix) const;
  /// A required float.
  double f64_req(const std::string& suffix) const;
  /// Marks `<arch>.<suffix>` as handled by the adapter without reading it.
  void consume(const std::string& suffix) const { consumed_.insert(key(suffix)); }
  bool consumed(const std::string& full_key) const { return consumed_.count(full_key) != 0; }

  [[noreturn]] void fail_key(const std::string& full_key, const std::string& what) const;

 private:
  uint32_t check_u32(const std::string& k, uint64_t v) const;

  const GgufFile& f_;
  std::string arch_;
  mutable std::set<std::string> consumed_;
};

/// The hyper-parameters every adapter reads the same way (llama.cpp's llama_model::load_hparams):
/// block_count, embedding_length, attention.head_count(_kv), feed_forward_length,
/// context_length, attention.key_length / value_length (default hidden / heads),
/// rope.dimension_count (default head_dim), rope.freq_base (default 10000),
/// attention.layer_norm_rms_epsilon, vocab_size (else tokenizer.ggml.tokens), tied embeddings;
/// rope.scaling.type "none" / "linear" (absent: linear) with rope.scaling.factor (or
/// rope.scale_linear) as every layer's rope_scale; every layer RoPE on at rope.freq_base, no
/// window. Throws GgufError naming the key (yarn / longrope / unknown scaling types included).
void read_common(const ArchReader& r, ModelConfig& c);

/// Sets rope_dims < head_dim as partial rotary (kPartialRotary), and kLayerRope when some layer's
/// RoPE differs from the config's plain one (base != rope_theta, scale != 1, or off).
void finish_rope_features(ModelConfig& c);

/// rope_freqs.weight as f32 (F32, F16 or BF16; {rope_dims / 2}) when the file has it, with
/// kRopeFreqFactors set; nothing when absent. Throws GgufError naming the tensor.
void read_rope_freq_factors(const ArchReader& r, ModelConfig& c);

}  // namespace plinth::arch
