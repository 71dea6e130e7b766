#include <array>
#include <stdexcept>
#include <string>

#include "tiny_llama.hpp"

namespace tiny {
namespace {

// y[out] = W x for a ggml linear layer {in, out}: row o of W is w[o * in .. o * in + in).
std::vector<float> linear(const std::vector<float>& w, const std::vector<float>& x, size_t out) {
  const size_t in = x.size();
  std::vector<float> y(out, 0.0f);
  for (size_t o = 0; o < out; ++o) {
    float acc = 0.0f;
    for (size_t i = 0; i < in; ++i) acc += w[o * in + i] * x[i];
    y[o] = acc;
  }
  return y;
}

std::vector<float> rmsnorm(const std::vector<float>& x, const std::vector<float>& g, float eps) {
  float ss = 0.0f;
  for (float v : x) ss += v * v;
  const float r = 1.0f / std::sqrt(ss / static_cast<float>(x.size()) + eps);
  std::vector<float> y(x.size());
  for (size_t i = 0; i < x.size(); ++i) y[i] = x[i] * r * g[i];
  return y;
}

void rope(std::vector<float>& v, size_t heads, size_t hd, int pos, double theta, bool neox) {
  for (size_t h = 0; h < heads; ++h) {
    float* x = v.data() + h * hd;
    for (size_t i = 0; i < hd / 2; ++i) {
      const double a =
          pos * std::pow(theta, -2.0 * static_cast<double>(i) / static_cast<double>(hd));
      const float c = static_cast<float>(std::cos(a)), s = static_cast<float>(std::sin(a));
      const size_t i0 = neox ? i : 2 * i, i1 = neox ? i + hd / 2 : 2 * i + 1;
      const float x0 = x[i0], x1 = x[i1];
      x[i0] = x0 * c - x1 * s;
      x[i1] = x0 * s + x1 * c;
    }
  }
}

}  // namespace

std::vector<std::vector<float>> Model::naive_logits(const std::vector<int32_t>& tokens,
                                                    uint32_t num_layers) const {
  const Dims& d = d_;
  if (num_layers < 1 || num_layers > d.n_layers) {
    throw std::invalid_argument("naive_logits: num_layers = " + std::to_string(num_layers) +
                                " must lie in [1, " + std::to_string(d.n_layers) + "]");
  }
  const size_t hd = d.head_dim, group = d.n_heads / d.n_kv_heads;
  const size_t qd = d.n_heads * hd, kvd = d.n_kv_heads * hd;
  std::vector<std::vector<std::vector<float>>> kcache(d.n_layers), vcache(d.n_layers);
  const std::vector<float>& embd = w("token_embd.weight");
  std::vector<std::vector<float>> out;
  for (size_t pos = 0; pos < tokens.size(); ++pos) {
    std::vector<float> x(embd.begin() + static_cast<long>(tokens[pos] * d.hidden),
                         embd.begin() + static_cast<long>((tokens[pos] + 1) * d.hidden));
    for (uint32_t l = 0; l < num_layers; ++l) {
      const std::string p = "blk." + std::to_string(l) + ".";
      std::vector<float> xn = rmsnorm(x, w(p + "attn_norm.weight"), d.eps);
      std::vector<float> q = linear(w(p + "attn_q.weight"), xn, qd);
      std::vector<float> k = linear(w(p + "attn_k.weight"), xn, kvd);
      std::vector<float> v = linear(w(p + "attn_v.weight"), xn, kvd);
      rope(q, d.n_heads, hd, static_cast<int>(pos), d.rope_theta, d.rope_neox != 0);
      rope(k, d.n_kv_heads, hd, static_cast<int>(pos), d.rope_theta, d.rope_neox != 0);
      kcache[l].push_back(k);
      vcache[l].push_back(v);
      std::vector<float> att(qd, 0.0f);
      for (size_t h = 0; h < d.n_heads; ++h) {
        const size_t g = h / group;
        std::vector<float> sc(pos + 1);
        float mx = -INFINITY;
        for (size_t j = 0; j <= pos; ++j) {
          float s = 0.0f;
          for (size_t e = 0; e < hd; ++e) s += q[h * hd + e] * kcache[l][j][g * hd + e];
          sc[j] = s / std::sqrt(static_cast<float>(hd));
          mx = std::max(mx, sc[j]);
        }
        float sum = 0.0f;
        for (float& s : sc) sum += (s = std::exp(s - mx));
        for (size_t j = 0; j <= pos; ++j) {
          for (size_t e = 0; e < hd; ++e) att[h * hd + e] += sc[j] / sum * vcache[l][j][g * hd + e];
        }
      }
      std::vector<float> o = linear(w(p + "attn_output.weight"), att, d.hidden);
      for (size_t i = 0; i < x.size(); ++i) x[i] += o[i];
      xn = rmsnorm(x, w(p + "ffn_norm.weight"), d.eps);
      std::vector<float> gate = linear(w(p + "ffn_gate.weight"), xn, d.ffn);
      const std::vector<float> up = linear(w(p + "ffn_up.weight"), xn, d.ffn);
      for (size_t i = 0; i < gate.size(); ++i)
        gate[i] = gate[i] / (1.0f + std::exp(-gate[i])) * up[i];
      const std::vector<float> down = linear(w(p + "ffn_down.weight"), gate, d.hidden);
      for (size_t i = 0; i < x.size(); ++i) x[i] += down[i];
    }
    out.push_back(linear(embd, rmsnorm(x, w("output_norm.weight"), d.eps), d.vocab));
  }
  return out;
}

}  // namespace tiny
