#include "attention.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <vector>

#include "float_ops.hpp"
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

// Points krow[j] / vrow[j] at K/V of head g for positions j < ctx of sequence s, as f32 (the
// cache itself for F32; per-thread converted copies for F16).
void gather_rows(const plinth_batch& b, const PagedKvCache& kv, int64_t layer, int32_t s, int64_t g,
                 int64_t hd, int64_t ctx, std::vector<const float*>& krow,
                 std::vector<const float*>& vrow, std::vector<float>& kbuf,
                 std::vector<float>& vbuf) {
  const int64_t bs = kv.block_size();
  const int32_t* table = b.block_tables + static_cast<int64_t>(s) * b.max_blocks_per_seq;
  krow.resize(static_cast<size_t>(ctx));
  vrow.resize(static_cast<size_t>(ctx));
  const bool f16 = kv.dtype() == KvDtype::F16;
  if (f16) {
    kbuf.resize(static_cast<size_t>(ctx * hd));
    vbuf.resize(static_cast<size_t>(ctx * hd));
  }
  for (int64_t j = 0; j < ctx; ++j) {
    const int64_t slot = static_cast<int64_t>(table[j / bs]) * bs + j % bs;
    const auto idx = static_cast<size_t>(j);
    if (!f16) {
      krow[idx] = static_cast<const float*>(kv.row(layer, 0, slot)) + g * hd;
      vrow[idx] = static_cast<const float*>(kv.row(layer, 1, slot)) + g * hd;
    } else {
      const auto* kh = static_cast<const uint16_t*>(kv.row(layer, 0, slot)) + g * hd;
      const auto* vh = static_cast<const uint16_t*>(kv.row(layer, 1, slot)) + g * hd;
      float* kd = kbuf.data() + j * hd;
      float* vd = vbuf.data() + j * hd;
      for (int64_t e = 0; e < hd; ++e) {
        kd[e] = fp16_to_fp32(kh[e]);
        vd[e] = fp16_to_fp32(vh[e]);
      }
      krow[idx] = kd;
      vrow[idx] = vd;
    }
  }
}

}  // namespace

void paged_attention(const plinth_batch& b, const PagedKvCache& kv, int64_t layer,
                     const AttentionShape& shape, const float* q, float* out, ThreadPool& pool) {
  const int64_t hd = shape.head_dim;
  const int64_t group = shape.n_heads / shape.n_kv_heads;
  const int64_t qdim = shape.n_heads * hd;
  const float scale = 1.0f / std::sqrt(static_cast<float>(hd));

  std::vector<Item> items;
  for (uint32_t s = 0; s < b.num_seqs; ++s) {
    for (int32_t t0 = b.query_start[s]; t0 < b.query_start[s + 1]; t0 += kQueryChunk) {
      const int32_t t1 = std::min(t0 + kQueryChunk, b.query_start[s + 1]);
      for (int64_t g = 0; g < shape.n_kv_heads; ++g) {
        items.push_back({static_cast<int32_t>(s), static_cast<int32_t>(g), t0, t1});
      }
    }
  }

  const auto run = [&](const Item& it) {
    thread_local std::vector<const float*> krow, vrow;
    thread_local std::vector<float> kbuf, vbuf, scores;
    // Positions ascend within a sequence, so the chunk's last token sees the longest context.
    const int64_t ctx = static_cast<int64_t>(b.positions[it.t1 - 1]) + 1;
    gather_rows(b, kv, layer, it.seq, it.kv_head, hd, ctx, krow, vrow, kbuf, vbuf);
    scores.resize(static_cast<size_t>(ctx));
    for (int32_t t = it.t0; t < it.t1; ++t) {
      const int64_t n_ctx = static_cast<int64_t>(b.positions[t]) + 1;
      for (int64_t r = 0; r < group; ++r) {
        const int64_t h = it.kv_head * group + r;
        const float* qv = q + t * qdim + h * hd;
        for (int64_t j = 0; j < n_ctx; ++j) {
          scores[static_cast<size_t>(j)] = dot(qv, krow[static_cast<size_t>(j)], hd) * scale;
        }
        softmax(scores.data(), n_ctx);
        float* o = out + t * qdim + h * hd;
        std::memset(o, 0, static_cast<size_t>(hd) * sizeof(float));
        for (int64_t j = 0; j < n_ctx; ++j) {
          axpy(scores[static_cast<size_t>(j)], vrow[static_cast<size_t>(j)], o, hd);
        }
      }
    }
  };

  const auto n_items = static_cast<int64_t>(items.size());
  const int64_t parts = pool.size();
  // Item i goes to participant i % parts: later chunks of a prefill cost more (longer context),
  // and interleaving spreads them evenly.
  pool.parallel_for(parts, [&](int64_t p0, int64_t p1) {
    for (int64_t p = p0; p < p1; ++p) {
      for (int64_t i = p; i < n_items; i += parts) run(items[static_cast<size_t>(i)]);
    }
  });
}

}  // namespace plinth::cpu
