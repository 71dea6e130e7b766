// Rotary position embedding (RoPE, Su et al. 2021, "RoFormer", §3.4) as ggml applies it
// (ggml_rope_ext without YaRN: ext_factor 0, attn_factor 1).
#pragma once

#include <cstdint>
#include <vector>

namespace plinth::cpu {

/// RoPE for heads of `head_dim` elements, of which the first `rope_dims` (even, <= head_dim) are
/// rotated and the rest pass through (partial rotary). Pair i (i < rope_dims / 2) is rotated by
/// the angle pos * scale * theta^(-2i / rope_dims) / factors[i] (factors: llama.cpp's
/// rope_freqs.weight, empty = 1; scale: llama.cpp's freq_scale). GGML "normal" mode (LLaMA GGUFs,
/// whose Q/K rows llama.cpp's converter permuted) rotates adjacent elements (x[2i], x[2i+1]);
/// NeoX mode rotates (x[i], x[i + rope_dims/2]). Angles are computed in double, the rotation in
/// float.
class Rope {
 public:
  Rope(int64_t head_dim, double theta, bool neox)
      : Rope(head_dim, head_dim, theta, neox, 1.0, {}) {}
  Rope(int64_t head_dim, int64_t rope_dims, double theta, bool neox, double scale,
       const std::vector<float>& factors);

  /// Fills table[n, rope_dims] with (cos, sin) of every pair for positions[n].
  void tables(const int32_t* positions, int64_t n, float* table) const;
  /// Rotates x[n_heads, head_dim] in place with the row of `tables` for its position.
  void apply(float* x, int64_t n_heads, const float* cos_sin) const;
  int64_t head_dim() const { return head_dim_; }
  int64_t rope_dims() const { return rope_dims_; }

 private:
  int64_t head_dim_;
  int64_t rope_dims_;
  bool neox_;
  std::vector<double> inv_freq_;  // [rope_dims / 2] scale * theta^(-2i / rope_dims) / factors[i]
};

}  // namespace plinth::cpu
