#include "llama_forward.hpp"

#include <cmath>
#include <cstring>
#include <stdexcept>
#include <string>

#include "activation.hpp"
#include "attention.hpp"
#include "batch_check.hpp"
#include "dequantize.hpp"
#include "float_ops.hpp"
#include "matmul.hpp"

namespace plinth::cpu {
namespace {

std::vector<float> rows_of(int64_t rows, int64_t cols) {
  return std::vector<float>(static_cast<size_t>(rows * cols));
}

}  // namespace

LlamaForward::LlamaForward(const plinth_model_desc& model, const ForwardOptions& options)
    : w_(bind_llama_weights(model)),
      opt_(options),
      pool_(options.threads),
      kv_(w_.shape.n_layers, w_.shape.n_kv_heads, w_.shape.head_dim, options.kv_dtype) {
  if (opt_.max_batch_tokens < 1) {
    throw std::invalid_argument("max_batch_tokens=" + std::to_string(opt_.max_batch_tokens) +
                                " must be >= 1");
  }
  pack_for_path(w_, opt_.matmul, pool_);
  const LlamaShape& s = w_.shape;
  const int64_t n = opt_.max_batch_tokens;
  x_ = rows_of(n, s.hidden);
  xn_ = rows_of(n, s.hidden);
  // Buffers for the fused projections and / or the separate ones, as the layers need (a file
  // may mix weight types across layers).
  bool any_fused_qkv = false, any_separate_qkv = false;
  bool any_fused_gu = false, any_separate_gu = false;
  for (const LayerWeights& L : w_.layers) {
    (L.wqkv.rows > 0 ? any_fused_qkv : any_separate_qkv) = true;
    (L.w_gate_up.rows > 0 ? any_fused_gu : any_separate_gu) = true;
  }
  q_ = rows_of(n, s.q_dim());
  if (any_fused_qkv) qkv_ = rows_of(n, s.q_dim() + 2 * s.kv_dim());
  if (any_separate_qkv) {
    k_ = rows_of(n, s.kv_dim());
    v_ = rows_of(n, s.kv_dim());
  }
  attn_ = rows_of(n, s.q_dim());
  proj_ = rows_of(n, s.hidden);
  gate_ = rows_of(n, s.ffn);
  if (any_fused_gu) gate_up_ = rows_of(n, 2 * s.ffn);
  if (any_separate_gu) up_ = rows_of(n, s.ffn);
  // One Rope per distinct (base, scale) of the layers that rotate (gemma3: local and global).
  for (const sdk::LayerSpec& L : s.layers) {
    int index = -1;
    if (L.rope) {
      for (size_t i = 0; i < rope_keys_.size(); ++i) {
        if (rope_keys_[i].first == L.rope_base && rope_keys_[i].second == L.rope_scale) {
          index = static_cast<int>(i);
        }
      }
      if (index < 0) {
        index = static_cast<int>(ropes_.size());
        rope_keys_.emplace_back(L.rope_base, L.rope_scale);
        ropes_.emplace_back(s.head_dim, s.rope_dims, L.rope_base, s.rope_neox, L.rope_scale,
                            s.rope_freq_factors);
        rope_tables_.push_back(rows_of(n, s.rope_dims));
      }
    }
    layer_rope_.push_back(index);
  }
}

void LlamaForward::parallel_rows(int64_t n, const std::function<void(int64_t, int64_t)>& fn) {
  // Element-wise work is cheap: below a few rows the wake-up costs more than it saves.
  if (n >= 4 && pool_.size() > 1) {
    pool_.parallel_for(n, fn);
  } else {
    fn(0, n);
  }
}

const float* LlamaForward::forward(const plinth_batch& b) {
  return run(b, w_.shape.n_layers);
}

const float* LlamaForward::forward_early_exit(const plinth_batch& b, int64_t exit_layer) {
  const int64_t n_layers = w_.shape.n_layers;
  if (exit_layer < 1 || exit_layer >= n_layers) {
    throw std::invalid_argument(
        "forward_early_exit: exit_layer = " + std::to_string(exit_layer) + " must lie in [1, " +
        std::to_string(n_layers) + ") (the model has " + std::to_string(n_layers) +
        " layers; exit_layer = " + std::to_string(n_layers) + " is the full model: use forward)");
  }
  return run(b, exit_layer);
}

const float* LlamaForward::run(const plinth_batch& b, int64_t num_layers) {
  if (!kv_.allocated()) {
    throw std::invalid_argument("forward: the KV cache is not allocated (call allocate_kv first)");
  }
  const LlamaShape& s = w_.shape;
  validate_batch(b, BatchLimits{s.vocab, s.context, kv_.num_blocks(), kv_.block_size(),
                                opt_.max_batch_tokens});
  const int64_t n = b.num_tokens;
  const int64_t m = b.num_logits;
  logits_.resize(static_cast<size_t>(m * s.vocab));
  if (n == 0) return logits_.data();

  rows_.assign(b.logits_indices, b.logits_indices + m);
  const bool embed_scale = s.has(sdk::kEmbedScale);
  parallel_rows(n, [&](int64_t t0, int64_t t1) {
    for (int64_t t = t0; t < t1; ++t) {
      float* x = x_.data() + t * s.hidden;
      dequantize(w_.token_embd.type, w_.token_embd.data, b.token_ids[t] * s.hidden, s.hidden, x);
      if (embed_scale) scale(x, s.embed_scale, s.hidden);
    }
  });
  for (size_t i = 0; i < ropes_.size(); ++i) {
    ropes_[i].tables(b.positions, n, rope_tables_[i].data());
  }
  for (int64_t l = 0; l < num_layers; ++l) run_layer(l, b, n, l + 1 == num_layers);

  // run_layer compacted the logits rows of the last layer run to the front: x_[m, hidden].
  if (m > 0) {
    rmsnorm(x_.data(), w_.output_norm, m, s.hidden, s.rms_eps, xn_.data());
    matmul(w_.lm_head, xn_.data(), m, logits_.data(), pool_, opt_.matmul);
    finish_logits(m);
  }
  return logits_.data();
}

void LlamaForward::finish_logits(int64_t m) {
  const LlamaShape& s = w_.shape;
  const bool softcap = s.has(sdk::kLogitSoftcap);
  const bool logit_scale = s.has(sdk::kLogitScale);
  if (!softcap && !logit_scale) return;
  // As llama.cpp: scale by 1/c, tanh, scale by c (gemma3's final_logit_softcapping).
  parallel_rows(m, [&](int64_t r0, int64_t r1) {
    for (int64_t i = r0 * s.vocab; i < r1 * s.vocab; ++i) {
      float v = logits_[static_cast<size_t>(i)];
      if (logit_scale) v *= s.logit_scale;
      if (softcap) v = std::tanh(v * (1.0f / s.logit_softcap)) * s.logit_softcap;
      logits_[static_cast<size_t>(i)] = v;
    }
  });
}

void LlamaForward::run_layer(int64_t l, const plinth_batch& b, int64_t n, bool last) {
  const LlamaShape& s = w_.shape;
  const LayerWeights& L = w_.layers[static_cast<size_t>(l)];
  const int64_t hd = s.head_dim;

  // Attention block.
  pre_norm(L.attn_norm, n);
  project_qkv(l, b, n);
  const AttentionShape shape{s.n_heads, s.n_kv_heads, hd, s.attn_scale,
                             s.layers[static_cast<size_t>(l)].sliding_window};
  paged_attention(b, kv_, l, shape, q_.data(), attn_.data(), pool_);

  int64_t rows = n;
  if (last) {
    // Only the logits rows reach the LM head. Indices ascend, so row i <- rows_[i] >= i never
    // overwrites a row still to be read.
    rows = static_cast<int64_t>(rows_.size());
    for (int64_t i = 0; i < rows; ++i) {
      const int64_t r = rows_[static_cast<size_t>(i)];
      if (r == i) continue;
      std::memcpy(attn_.data() + i * s.q_dim(), attn_.data() + r * s.q_dim(),
                  static_cast<size_t>(s.q_dim()) * sizeof(float));
      std::memcpy(x_.data() + i * s.hidden, x_.data() + r * s.hidden,
                  static_cast<size_t>(s.hidden) * sizeof(float));
    }
    if (rows == 0) return;
  }
  matmul(L.wo, attn_.data(), rows, proj_.data(), pool_, opt_.matmul);
  add_residual(L.post_attn_norm, rows);

  // Feed-forward block (gated: SwiGLU, Shazeer 2020, or GELU-tanh).
  pre_norm(L.ffn_norm, rows);
  gate_up(L, rows);
  matmul(L.w_down, gate_.data(), rows, proj_.data(), pool_, opt_.matmul);
  add_residual(L.post_ffn_norm, rows);
}

void LlamaForward::pre_norm(const float* norm, int64_t rows) {
  const LlamaShape& s = w_.shape;
  if (norm == nullptr) {  // no_pre_norms: the sub-block reads the residual stream itself
    std::memcpy(xn_.data(), x_.data(), static_cast<size_t>(rows * s.hidden) * sizeof(float));
    return;
  }
  parallel_rows(rows, [&](int64_t t0, int64_t t1) {
    rmsnorm(x_.data() + t0 * s.hidden, norm, t1 - t0, s.hidden, s.rms_eps,
            xn_.data() + t0 * s.hidden);
  });
}

void LlamaForward::add_residual(const float* post_norm, int64_t rows) {
  const LlamaShape& s = w_.shape;
  const bool residual_scale = s.has(sdk::kResidualScale);
  if (post_norm != nullptr || residual_scale) {
    parallel_rows(rows, [&](int64_t t0, int64_t t1) {
      float* p = proj_.data() + t0 * s.hidden;
      if (post_norm != nullptr) rmsnorm(p, post_norm, t1 - t0, s.hidden, s.rms_eps, p);
      // As llama.cpp: the branch scaled, then added (granite's residual_multiplier).
      if (residual_scale) scale(p, s.residual_scale, (t1 - t0) * s.hidden);
    });
  }
  axpy(1.0f, proj_.data(), x_.data(), rows * s.hidden);
}

void LlamaForward::project_qkv(int64_t l, const plinth_batch& b, int64_t n) {
  const LlamaShape& s = w_.shape;
  const LayerWeights& L = w_.layers[static_cast<size_t>(l)];
  const bool fused = L.wqkv.rows > 0;
  // Row t's q, k, v: in qkv_ side by side (fused) or in q_, k_, v_.
  const int64_t stride = fused ? s.q_dim() + 2 * s.kv_dim() : 0;
  if (fused) {
    matmul(L.wqkv, xn_.data(), n, qkv_.data(), pool_, opt_.matmul);
  } else {
    matmul(L.wq, xn_.data(), n, q_.data(), pool_, opt_.matmul);
    matmul(L.wk, xn_.data(), n, k_.data(), pool_, opt_.matmul);
    matmul(L.wv, xn_.data(), n, v_.data(), pool_, opt_.matmul);
  }
  const bool qk_norm_full = s.has(sdk::kQkNormFull);
  const int rope_index = layer_rope_[static_cast<size_t>(l)];
  const Rope* rope = rope_index >= 0 ? &ropes_[static_cast<size_t>(rope_index)] : nullptr;
  const float* table =
      rope_index >= 0 ? rope_tables_[static_cast<size_t>(rope_index)].data() : nullptr;
  parallel_rows(n, [&](int64_t t0, int64_t t1) {
    for (int64_t t = t0; t < t1; ++t) {
      float* q = q_.data() + t * s.q_dim();
      float* k = fused ? qkv_.data() + t * stride + s.q_dim() : k_.data() + t * s.kv_dim();
      float* v = fused ? k + s.kv_dim() : v_.data() + t * s.kv_dim();
      if (fused) {
        std::memcpy(q, qkv_.data() + t * stride, static_cast<size_t>(s.q_dim()) * sizeof(float));
      }
      if (L.bq != nullptr) {  // qkv_bias
        axpy(1.0f, L.bq, q, s.q_dim());
        axpy(1.0f, L.bk, k, s.kv_dim());
        axpy(1.0f, L.bv, v, s.kv_dim());
      }
      if (L.q_norm != nullptr && !qk_norm_full) {  // qk_norm: RMSNorm of each head
        rmsnorm(q, L.q_norm, s.n_heads, s.head_dim, s.rms_eps, q);
        rmsnorm(k, L.k_norm, s.n_kv_heads, s.head_dim, s.rms_eps, k);
      } else if (L.q_norm != nullptr) {  // qk_norm_full: one RMSNorm over all heads
        rmsnorm(q, L.q_norm, 1, s.q_dim(), s.rms_eps, q);
        rmsnorm(k, L.k_norm, 1, s.kv_dim(), s.rms_eps, k);
      }
      if (rope != nullptr) {
        const float* cs = table + t * s.rope_dims;
        rope->apply(q, s.n_heads, cs);
        rope->apply(k, s.n_kv_heads, cs);
      }
      // Distinct tokens have distinct slots (validated), so the writes never overlap.
      kv_.write(l, b.slot_mapping[t], k, v);
    }
  });
}

void LlamaForward::gate_up(const LayerWeights& L, int64_t rows) {
  const int64_t f = w_.shape.ffn;
  if (L.w_gate_up.rows > 0) {
    matmul(L.w_gate_up, xn_.data(), rows, gate_up_.data(), pool_, opt_.matmul);
    parallel_rows(rows, [&](int64_t t0, int64_t t1) {
      for (int64_t t = t0; t < t1; ++t) {
        const float* g = gate_up_.data() + t * 2 * f;
        gated(g, g + f, f, gate_.data() + t * f);
      }
    });
    return;
  }
  matmul(L.w_gate, xn_.data(), rows, gate_.data(), pool_, opt_.matmul);
  matmul(L.w_up, xn_.data(), rows, up_.data(), pool_, opt_.matmul);
  parallel_rows(rows, [&](int64_t t0, int64_t t1) {
    gated(gate_.data() + t0 * f, up_.data() + t0 * f, (t1 - t0) * f, gate_.data() + t0 * f);
  });
}

void LlamaForward::gated(const float* gate, const float* up, int64_t count, float* out) const {
  if (!w_.shape.has(sdk::kGeluTanh)) {
    silu_mul(gate, up, count, out);
    return;
  }
  gelu_tanh_mul(gate, up, count, out);
}

}  // namespace plinth::cpu
