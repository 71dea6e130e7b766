// Rotary position embedding (RoPE, Su et al. 2021, "RoFormer", §3.4) as ggml applies it.
#pragma once

#include <cstdint>
#include <vector>

namespace plinth::cpu {

/// RoPE for heads of `head_dim` elements. Pair i (i < head_dim / 2) is rotated by the angle
/// pos * theta^(-2i / head_dim). GGML "normal" mode (LLaMA GGUFs, whose Q/K rows llama.cpp's
/// converter permuted) rotates adjacent elements (x[2i], x[2i+1]); NeoX mode rotates
/// (x[i], x[i + head_dim/2]). Angles are computed in double, the rotation in float.
class Rope {
 public:
  Rope(int64_t head_dim, double theta, bool neox);

  /// Fills table[n, head_dim] with (cos, sin) of every pair for positions[n].
  void tables(const int32_t* positions, int64_t n, float* table) const;
  /// Rotates x[n_heads, head_dim] in place with the row of `tables` for its position.
  void apply(float* x, int64_t n_heads, const float* cos_sin) const;
  int64_t head_dim() const { return head_dim_; }

 private:
  int64_t head_dim_;
  bool neox_;
  std::vector<double> inv_freq_;  // [head_dim / 2] theta^(-2i / head_dim)
};

}  // namespace plinth::cpu
