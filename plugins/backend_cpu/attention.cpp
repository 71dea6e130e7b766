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

// K (kind 0) or V (kind 1) of KV head g at position j of sequence s, as f32: a pointer into the
// cache (F32) or into `tmp` after conversion (F16).
const float* kv_row(const plinth_batch& b, const PagedKvCache& kv, int64_t layer, int kind,
                    int32_t s, int64_t g, int64_t hd, int64_t j, float* tmp) {
  const int64_t bs = kv.block_size();
  const int32_t* table = b.block_tables + static_cast<int64_t>(s) * b.max_blocks_per_seq;
  const int64_t slot = static_cast<int64_t>(table[j / bs]) * bs + j % bs;
  if (kv.dtype() != KvDtype::F16) {
    return static_cast<const float*>(kv.row(layer, kind, slot)) + g * hd;
  }
  const auto* h = static_cast<const uint16_t*>(kv.row(layer, kind, slot)) + g * hd;
  for (int64_t e = 0; e < hd; ++e) tmp[e] = fp16_to_fp32(h[e]);
  return tmp;
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
  // r = k * group + head-in-group, read in place from the cache's blocks (no gathered copy: that
  // copy was a third of a batched decode step). Each score is dot(q, K_j) over head_dim, each
  // output starts at 0 and adds p_j·V_j for j = 0 .. p in order: the arithmetic of one output
  // depends only on its own query and positions, never on the chunk or the batch.
  const auto run = [&](const Item& it) {
    thread_local std::vector<float> scores, tmp;
    // Positions ascend within a sequence, so the chunk's last token sees the longest context.
    const int64_t ctx = static_cast<int64_t>(b.positions[it.t1 - 1]) + 1;
    const int64_t nq = it.t1 - it.t0;
    const int64_t nr = nq * group;
    scores.resize(static_cast<size_t>(nr * ctx));
    tmp.resize(static_cast<size_t>(hd));
    const auto q_row = [&](int64_t r) {
      return q + (it.t0 + r / group) * qdim + (it.kv_head * group + r % group) * hd;
    };
    const auto out_row = [&](int64_t r) {
      return out + (it.t0 + r / group) * qdim + (it.kv_head * group + r % group) * hd;
    };
    const auto visible = [&](int64_t r) {  // positions row r attends to
      return static_cast<int64_t>(b.positions[it.t0 + r / group]) + 1;
    };
    for (int64_t j = 0; j < ctx; ++j) {
      const float* kj = kv_row(b, kv, layer, 0, it.seq, it.kv_head, hd, j, tmp.data());
      for (int64_t r = 0; r < nr; ++r) {
        if (j < visible(r)) scores[static_cast<size_t>(r * ctx + j)] = dot(q_row(r), kj, hd);
      }
    }
    for (int64_t r = 0; r < nr; ++r) {
      float* sc = scores.data() + r * ctx;
      scale(sc, scale_factor, visible(r));
      softmax(sc, visible(r));
      std::fill(out_row(r), out_row(r) + hd, 0.0f);
    }
    for (int64_t j = 0; j < ctx; ++j) {
      const float* vj = kv_row(b, kv, layer, 1, it.seq, it.kv_head, hd, j, tmp.data());
      for (int64_t r = 0; r < nr; ++r) {
        if (j < visible(r)) axpy(scores[static_cast<size_t>(r * ctx + j)], vj, out_row(r), hd);
      }
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
