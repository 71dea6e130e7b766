#include "attention.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <vector>

#include "float_ops.hpp"
#include "kernel_table.hpp"
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

// Row pointers of KV head g of sequence s, positions j < ctx, in place in the cache: K into kptr,
// V into vptr (T = float for an F32 cache, uint16_t for IEEE half bits of an F16 one).
template <class T>
void kv_rows(const plinth_batch& b, const PagedKvStorage& kv, int64_t layer, int32_t s, int64_t g,
             int64_t ctx, std::vector<const T*>& kptr, std::vector<const T*>& vptr) {
  const int64_t bs = kv.block_size();
  const int32_t* table = b.block_tables + static_cast<int64_t>(s) * b.max_blocks_per_seq;
  kptr.resize(static_cast<size_t>(ctx));
  vptr.resize(static_cast<size_t>(ctx));
  for (int64_t j = 0; j < ctx; ++j) {
    const int64_t slot = static_cast<int64_t>(table[j / bs]) * bs + j % bs;
    kptr[static_cast<size_t>(j)] = static_cast<const T*>(kv.head_row(layer, 0, slot, g));
    vptr[static_cast<size_t>(j)] = static_cast<const T*>(kv.head_row(layer, 1, slot, g));
  }
}

// F16 rows whose head_dim the f16 kernels do not take in place (not a multiple of 16): converted
// (exactly) into `buf`, so the f32 kernels see the same values.
void widen(const std::vector<const uint16_t*>& rows, int64_t hd, std::vector<float>& buf,
           std::vector<const float*>& out) {
  buf.resize(rows.size() * static_cast<size_t>(hd));
  out.resize(rows.size());
  for (size_t j = 0; j < rows.size(); ++j) {
    float* f = buf.data() + j * static_cast<size_t>(hd);
    for (int64_t e = 0; e < hd; ++e) f[e] = fp16_to_fp32(rows[j][e]);
    out[j] = f;
  }
}

// The work items: each sequence's queries in chunks of kQueryChunk, times each KV head.
std::vector<Item> make_items(const plinth_batch& b, int64_t n_kv_heads) {
  std::vector<Item> items;
  for (uint32_t s = 0; s < b.num_seqs; ++s) {
    for (int32_t t0 = b.query_start[s]; t0 < b.query_start[s + 1]; t0 += kQueryChunk) {
      const int32_t t1 = std::min(t0 + kQueryChunk, b.query_start[s + 1]);
      for (int64_t g = 0; g < n_kv_heads; ++g) {
        items.push_back({static_cast<int32_t>(s), static_cast<int32_t>(g), t0, t1});
      }
    }
  }
  return items;
}

// Scales and softmaxes positions [j0, j0 + visible) of each of the `group` score rows `rows`;
// returns the rows' pointers at j0 (`rows` itself when j0 == 0, else through `shifted`).
float* const* softmax_rows(float* const* rows, int64_t group, int64_t j0, int64_t visible,
                           float scale_factor, std::vector<float*>& shifted) {
  for (int64_t g = 0; g < group; ++g) {
    float* sc = rows[g] + j0;
    scale(sc, scale_factor, visible);
    softmax(sc, visible);
  }
  if (j0 == 0) return rows;
  shifted.resize(static_cast<size_t>(group));
  for (int64_t g = 0; g < group; ++g) shifted[static_cast<size_t>(g)] = rows[g] + j0;
  return shifted.data();
}

}  // namespace

void paged_attention(const plinth_batch& b, const PagedKvStorage& kv, int64_t layer,
                     const AttentionShape& shape, const float* q, float* out, ThreadPool& pool) {
  const int64_t hd = shape.head_dim;
  const int64_t group = shape.n_heads / shape.n_kv_heads;
  const int64_t qdim = shape.n_heads * hd;
  const float scale_factor =
      shape.scale != 0.0f ? shape.scale : 1.0f / std::sqrt(static_cast<float>(hd));
  const int64_t window = shape.window;

  std::vector<Item> items = make_items(b, shape.n_kv_heads);

  // One item: the queries of its chunk for the `group` heads sharing KV head g, as rows
  // r = k * group + head-in-group, read in place from the cache's blocks (no gathered copy: that
  // copy was a third of a batched decode step). Each score is dot(q, K_j) over head_dim, each
  // output starts at 0 and adds p_j·V_j for j = 0 .. p in order: the arithmetic of one output
  // depends only on its own query and positions, never on the chunk or the batch.
  // The scores of all the chunk's queries are computed in one dots_heads call (each K row read
  // once for the chunk), and the `group` heads of one token, which see the same positions, share
  // one weighted_sum_heads call (each V row read once for the group); every result is bit for bit
  // that of the single-head kernels.
  const auto run = [&](const Item& it) {
    thread_local std::vector<float> scores, kbuf, vbuf;
    thread_local std::vector<const float*> kptr, vptr, qh;
    thread_local std::vector<const uint16_t*> kptr16, vptr16;
    thread_local std::vector<float*> sh, oh, shifted;
    const detail::KernelTable& k = detail::active_kernels();
    // Positions ascend within a sequence, so the chunk's last token sees the longest context.
    const int64_t ctx = static_cast<int64_t>(b.positions[it.t1 - 1]) + 1;
    // F16 cache: read in place by the f16 kernels (head_dim % 16 == 0), else widened first.
    const bool f16 = kv.dtype() == KvDtype::kF16;
    const bool in_place16 = f16 && hd % 16 == 0;
    if (f16) {
      kv_rows(b, kv, layer, it.seq, it.kv_head, ctx, kptr16, vptr16);
      if (!in_place16) {
        widen(kptr16, hd, kbuf, kptr);
        widen(vptr16, hd, vbuf, vptr);
      }
    } else {
      kv_rows(b, kv, layer, it.seq, it.kv_head, ctx, kptr, vptr);
    }
    // Scores of every query of the chunk (rows (t - t0) * group + g) over the chunk's whole
    // context in one call, so each K row is read (and, f16, converted) once for the chunk; a
    // token's scores past its own position are computed and never read.
    const int64_t nq = static_cast<int64_t>(it.t1 - it.t0) * group;
    scores.resize(static_cast<size_t>(nq * ctx));
    qh.resize(static_cast<size_t>(nq));
    sh.resize(static_cast<size_t>(nq));
    oh.resize(static_cast<size_t>(nq));
    for (int64_t t = it.t0; t < it.t1; ++t) {
      for (int64_t g = 0; g < group; ++g) {
        const int64_t h = it.kv_head * group + g;
        const auto r = static_cast<size_t>((t - it.t0) * group + g);
        qh[r] = q + t * qdim + h * hd;
        sh[r] = scores.data() + static_cast<int64_t>(r) * ctx;
        oh[r] = out + t * qdim + h * hd;
      }
    }
    const int nqi = static_cast<int>(nq);
    if (in_place16) {
      k.dots_heads_f16(qh.data(), nqi, kptr16.data(), ctx, hd, sh.data());
    } else {
      k.dots_heads(qh.data(), nqi, kptr.data(), ctx, hd, sh.data());
    }
    for (int64_t t = it.t0; t < it.t1; ++t) {
      const int64_t end = static_cast<int64_t>(b.positions[t]) + 1;  // positions j0..p
      // Sliding window: positions before j0 are masked out (their scores never read).
      const int64_t j0 = window > 0 ? std::max<int64_t>(0, end - window) : 0;
      const auto r0 = static_cast<size_t>((t - it.t0) * group);
      float* const* probs =
          softmax_rows(sh.data() + r0, group, j0, end - j0, scale_factor, shifted);
      if (in_place16) {
        k.weighted_sum_heads_f16(probs, static_cast<int>(group), vptr16.data() + j0, end - j0, hd,
                                 oh.data() + r0);
      } else {
        k.weighted_sum_heads(probs, static_cast<int>(group), vptr.data() + j0, end - j0, hd,
                             oh.data() + r0);
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
