#include "attention.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <vector>

#include "float_ops.hpp"
#include "matmul.hpp"
#include "weight_types.hpp"

namespace plinth::cpu {
namespace {

// Query tokens per work item: enough items to keep every participant busy in a long prefill,
// few enough that the K/V row pointers of an item are reused across many queries.
constexpr int32_t kQueryChunk = 16;

struct Item {
  int32_t seq;
  int32_t kv_head;
  int32_t t0, t1;  // new-token range [t0, t1) of the batch
};

// Copies K of head g for positions j < ctx of sequence s into k[ctx, hd] and V transposed into
// vt[hd, ctx], as f32, through the sequence's block table.
void gather_kv(const plinth_batch& b, const PagedKvCache& kv, int64_t layer, int32_t s, int64_t g,
               int64_t hd, int64_t ctx, float* k, float* vt) {
  const int64_t bs = kv.block_size();
  const int32_t* table = b.block_tables + static_cast<int64_t>(s) * b.max_blocks_per_seq;
  const bool f16 = kv.dtype() == KvDtype::F16;
  for (int64_t j = 0; j < ctx; ++j) {
    const int64_t slot = static_cast<int64_t>(table[j / bs]) * bs + j % bs;
    float* kd = k + j * hd;
    if (!f16) {
      const float* ks = static_cast<const float*>(kv.row(layer, 0, slot)) + g * hd;
      const float* vs = static_cast<const float*>(kv.row(layer, 1, slot)) + g * hd;
      std::memcpy(kd, ks, static_cast<size_t>(hd) * sizeof(float));
      for (int64_t e = 0; e < hd; ++e) vt[e * ctx + j] = vs[e];
    } else {
      const auto* ks = static_cast<const uint16_t*>(kv.row(layer, 0, slot)) + g * hd;
      const auto* vs = static_cast<const uint16_t*>(kv.row(layer, 1, slot)) + g * hd;
      for (int64_t e = 0; e < hd; ++e) {
        kd[e] = fp16_to_fp32(ks[e]);
        vt[e * ctx + j] = fp16_to_fp32(vs[e]);
      }
    }
  }
}

}  // namespace

void paged_attention(const plinth_batch& b, const PagedKvCache& kv, int64_t layer,
                     const AttentionShape& shape, const float* q, float* out, ThreadPool& pool) {
  const int64_t hd = shape.head_dim;
  const int64_t group = shape.n_heads / shape.n_kv_heads;
  const int64_t qdim = shape.n_heads * hd;
  const float scale_factor = 1.0f / std::sqrt(static_cast<float>(hd));

  std::vector<Item> items;
  for (uint32_t s = 0; s < b.num_seqs; ++s) {
    for (int32_t t0 = b.query_start[s]; t0 < b.query_start[s + 1]; t0 += kQueryChunk) {
      const int32_t t1 = std::min(t0 + kQueryChunk, b.query_start[s + 1]);
      for (int64_t g = 0; g < shape.n_kv_heads; ++g) {
        items.push_back({static_cast<int32_t>(s), static_cast<int32_t>(g), t0, t1});
      }
    }
  }

  // One item: the queries of its chunk for the `group` heads sharing KV head g, as rows
  // r = k * group + head-in-group. Scores come from the kernels' f32 matmul (each score is one
  // 64-element dot, whatever the chunk, so the result does not depend on batching); each output
  // element is a dot over exactly the p + 1 visible positions, so neither does it.
  const auto run = [&](const Item& it) {
    thread_local std::vector<float> kbuf, vt, qbuf, scores;
    // Positions ascend within a sequence, so the chunk's last token sees the longest context.
    const int64_t ctx = static_cast<int64_t>(b.positions[it.t1 - 1]) + 1;
    const int64_t nq = it.t1 - it.t0;
    const int64_t nr = nq * group;
    kbuf.resize(static_cast<size_t>(ctx * hd));
    vt.resize(static_cast<size_t>(ctx * hd));
    qbuf.resize(static_cast<size_t>(nr * hd));
    scores.resize(static_cast<size_t>(nr * ctx));
    gather_kv(b, kv, layer, it.seq, it.kv_head, hd, ctx, kbuf.data(), vt.data());
    for (int64_t k = 0; k < nq; ++k) {
      std::memcpy(qbuf.data() + k * group * hd, q + (it.t0 + k) * qdim + it.kv_head * group * hd,
                  static_cast<size_t>(group * hd) * sizeof(float));
    }
    // scores[nr, ctx] = qbuf[nr, hd] · kbuf[ctx, hd]ᵀ
    matmul(WeightView{WeightType::F32, kbuf.data(), ctx, hd}, qbuf.data(), nr, scores.data(), pool,
           MatmulPath::Simd);
    for (int64_t row = 0; row < nr; ++row) {
      const int64_t t = it.t0 + row / group;
      const int64_t h = it.kv_head * group + row % group;
      const int64_t n_ctx = static_cast<int64_t>(b.positions[t]) + 1;
      float* sc = scores.data() + row * ctx;
      scale(sc, scale_factor, n_ctx);
      softmax(sc, n_ctx);
      float* o = out + t * qdim + h * hd;
      for (int64_t e = 0; e < hd; ++e) o[e] = dot(sc, vt.data() + e * ctx, n_ctx);
    }
  };

  // Longest-first: later chunks of a prefill see more context and cost more; the pool's
  // participants claim chunks of the item list dynamically, so the cheap items at the end even
  // out the finish.
  const auto cost = [&](const Item& it) {
    return static_cast<int64_t>(it.t1 - it.t0) * (b.positions[it.t1 - 1] + 1);
  };
  std::stable_sort(items.begin(), items.end(),
                   [&](const Item& x, const Item& y) { return cost(x) > cost(y); });
  pool.parallel_for(static_cast<int64_t>(items.size()), [&](int64_t i0, int64_t i1) {
    for (int64_t i = i0; i < i1; ++i) run(items[static_cast<size_t>(i)]);
  });
}

}  // namespace plinth::cpu
