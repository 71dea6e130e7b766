#!/usr/bin/env python3
"""Independent NumPy reference of the LLaMA forward pass over a GGUF file.

Written from the math (LLaMA: Touvron et al. 2023; RoPE: Su et al. 2021; GQA: Ainslie et al.
2023), not from any engine's code. Tensors are read with the `gguf` package and dequantized with
`gguf.quants.dequantize`, so the only thing shared with llama.cpp is the file format.

Shapes use the NumPy (row-major) order. GGUF lists dims in ggml order (ne0 first), so a weight
whose GGUF dims are [in, out] is a NumPy array of shape (out, in) and a linear layer is `x @ W.T`.

  token_embd.weight   (vocab, hidden)          also the LM head (tied embeddings)
  attn_q / attn_k / attn_v   (heads*hd, hidden) / (kv_heads*hd, hidden) x2
  attn_output         (hidden, heads*hd)
  ffn_gate / ffn_up   (ffn, hidden);  ffn_down (hidden, ffn)

RoPE convention: llama.cpp's converter permutes the HF Q/K rows of llama models so that the GGML
"normal" RoPE -- rotating ADJACENT pairs (x[2i], x[2i+1]) by pos * theta^(-2i/head_dim) -- is the
correct one for GGUF files. `rope="neox"` (rotate halves (x[i], x[i+d/2])) exists only to show the
other convention gives wrong results (see README.md).

Usage as a library:
    model = Model.load(path, dtype=np.float64)
    cache = model.new_cache()
    logits = model.forward(cache, [1, 2, 3])      # (3, vocab); appends to cache
    ids, steps = model.generate_greedy(prompt_ids, 32)
Command line:
    python3 reference.py --ids 1,2,3 --n 16       # greedy continuation, decoded with the GGUF vocab
"""

from __future__ import annotations

import argparse
import dataclasses
import sys
import time

import numpy as np

import gguf


@dataclasses.dataclass
class Config:
    n_layer: int
    hidden: int
    ffn: int
    n_head: int
    n_kv_head: int
    head_dim: int
    vocab: int
    rope_theta: float
    rms_eps: float
    context: int


@dataclasses.dataclass
class Layer:
    attn_norm: np.ndarray  # (hidden,)
    wq: np.ndarray  # (n_head*head_dim, hidden)
    wk: np.ndarray  # (n_kv_head*head_dim, hidden)
    wv: np.ndarray  # (n_kv_head*head_dim, hidden)
    wo: np.ndarray  # (hidden, n_head*head_dim)
    ffn_norm: np.ndarray  # (hidden,)
    w_gate: np.ndarray  # (ffn, hidden)
    w_up: np.ndarray  # (ffn, hidden)
    w_down: np.ndarray  # (hidden, ffn)


class KVCache:
    """Per-layer K and V arrays, (n_kv_head, capacity, head_dim); positions [0, length) valid."""

    def __init__(self, cfg: Config, dtype, capacity: int = 256):
        self.cfg = cfg
        self.dtype = dtype
        self.length = 0
        self.k = [np.zeros((cfg.n_kv_head, capacity, cfg.head_dim), dtype) for _ in range(cfg.n_layer)]
        self.v = [np.zeros((cfg.n_kv_head, capacity, cfg.head_dim), dtype) for _ in range(cfg.n_layer)]

    def reserve(self, n_total: int) -> None:
        cap = self.k[0].shape[1]
        if n_total <= cap:
            return
        if n_total > self.cfg.context:
            raise ValueError(f"sequence of {n_total} tokens exceeds the model context {self.cfg.context}")
        new_cap = max(n_total, 2 * cap)
        for arrs in (self.k, self.v):
            for i, a in enumerate(arrs):
                b = np.zeros((a.shape[0], new_cap, a.shape[2]), self.dtype)
                b[:, :cap] = a
                arrs[i] = b


def _field(reader: gguf.GGUFReader, key: str):
    f = reader.fields.get(key)
    if f is None:
        raise KeyError(f"GGUF metadata key '{key}' missing; is this a llama-architecture GGUF file?")
    return f.contents()


def _tensor(tensors: dict, name: str, shape: tuple) -> np.ndarray:
    if name not in tensors:
        raise KeyError(f"GGUF tensor '{name}' missing")
    t = tensors[name]
    a = np.asarray(gguf.quants.dequantize(t.data, t.tensor_type), dtype=np.float32)
    if a.shape != shape:
        raise ValueError(f"tensor '{name}': dequantized shape {a.shape}, expected {shape}")
    return a


def rms_norm(x: np.ndarray, w: np.ndarray, eps: float) -> np.ndarray:
    """x (n, hidden) -> x / sqrt(mean(x^2) + eps) * w; the mean of squares accumulates in float64."""
    ms = np.mean(np.square(x, dtype=np.float64), axis=-1, keepdims=True)
    return (x * (1.0 / np.sqrt(ms + eps)).astype(x.dtype)) * w


def rope(x: np.ndarray, positions: np.ndarray, theta: float, mode: str) -> np.ndarray:
    """Rotary embedding. x (n_heads, n_tokens, head_dim); positions (n_tokens,).

    Pair i (0 <= i < head_dim/2) is rotated by angle pos * theta^(-2i/head_dim). mode "norm" pairs
    (x[2i], x[2i+1]) (GGML normal RoPE, right for llama GGUF files); "neox" pairs (x[i], x[i+d/2]).
    Angles are computed in float64 and rounded to x.dtype.
    """
    d = x.shape[-1]
    inv_freq = theta ** (-np.arange(0, d, 2, dtype=np.float64) / d)  # (d/2,)
    ang = positions.astype(np.float64)[:, None] * inv_freq[None, :]  # (n, d/2)
    cos = np.cos(ang).astype(x.dtype)
    sin = np.sin(ang).astype(x.dtype)
    if mode == "norm":
        a, b = x[..., 0::2], x[..., 1::2]
    elif mode == "neox":
        a, b = x[..., : d // 2], x[..., d // 2 :]
    else:
        raise ValueError(f"rope mode '{mode}': expected 'norm' or 'neox'")
    ra = a * cos - b * sin
    rb = a * sin + b * cos
    out = np.empty_like(x)
    if mode == "norm":
        out[..., 0::2], out[..., 1::2] = ra, rb
    else:
        out[..., : d // 2], out[..., d // 2 :] = ra, rb
    return out


def softmax(s: np.ndarray) -> np.ndarray:
    """Softmax over the last axis, max-subtracted; exp sums accumulate in float64."""
    m = np.max(s, axis=-1, keepdims=True)
    e = np.exp((s - m).astype(np.float64))
    return (e / e.sum(axis=-1, keepdims=True)).astype(s.dtype)


def silu(x: np.ndarray) -> np.ndarray:
    return x / (1.0 + np.exp(-x))


class Model:
    def __init__(self, cfg: Config, embd: np.ndarray, layers: list, out_norm: np.ndarray, tokens: list,
                 dtype, rope_mode: str):
        self.cfg, self.embd, self.layers, self.out_norm = cfg, embd, layers, out_norm
        self.tokens, self.dtype, self.rope_mode = tokens, dtype, rope_mode

    @staticmethod
    def load(path: str, dtype=np.float64, rope_mode: str = "norm") -> "Model":
        """Read and dequantize every tensor of a llama GGUF file. dtype: weights and activations."""
        r = gguf.GGUFReader(path)
        arch = _field(r, "general.architecture")
        if arch != "llama":
            raise ValueError(f"{path}: general.architecture is '{arch}', this reference handles 'llama'")
        n_head = int(_field(r, "llama.attention.head_count"))
        hidden = int(_field(r, "llama.embedding_length"))
        tokens = list(_field(r, "tokenizer.ggml.tokens"))
        cfg = Config(
            n_layer=int(_field(r, "llama.block_count")), hidden=hidden,
            ffn=int(_field(r, "llama.feed_forward_length")), n_head=n_head,
            n_kv_head=int(_field(r, "llama.attention.head_count_kv")), head_dim=hidden // n_head,
            vocab=len(tokens), rope_theta=float(_field(r, "llama.rope.freq_base")),
            rms_eps=float(_field(r, "llama.attention.layer_norm_rms_epsilon")),
            context=int(_field(r, "llama.context_length")))
        rope_dims = r.fields.get("llama.rope.dimension_count")
        if rope_dims is not None and int(rope_dims.contents()) != cfg.head_dim:
            raise ValueError("partial RoPE (rope.dimension_count != head_dim) is not implemented")
        t = {x.name: x for x in r.tensors}
        if "output.weight" in t:
            raise ValueError("model has a separate output.weight; this reference assumes tied embeddings")
        H, F, V = cfg.hidden, cfg.ffn, cfg.vocab
        QD, KD = cfg.n_head * cfg.head_dim, cfg.n_kv_head * cfg.head_dim
        c = lambda a: a.astype(dtype, copy=False)  # noqa: E731
        layers = []
        for i in range(cfg.n_layer):
            p = f"blk.{i}."
            layers.append(Layer(
                attn_norm=c(_tensor(t, p + "attn_norm.weight", (H,))),
                wq=c(_tensor(t, p + "attn_q.weight", (QD, H))),
                wk=c(_tensor(t, p + "attn_k.weight", (KD, H))),
                wv=c(_tensor(t, p + "attn_v.weight", (KD, H))),
                wo=c(_tensor(t, p + "attn_output.weight", (H, QD))),
                ffn_norm=c(_tensor(t, p + "ffn_norm.weight", (H,))),
                w_gate=c(_tensor(t, p + "ffn_gate.weight", (F, H))),
                w_up=c(_tensor(t, p + "ffn_up.weight", (F, H))),
                w_down=c(_tensor(t, p + "ffn_down.weight", (H, F)))))
        return Model(cfg, c(_tensor(t, "token_embd.weight", (V, H))), layers,
                     c(_tensor(t, "output_norm.weight", (H,))), tokens, dtype, rope_mode)

    def new_cache(self) -> KVCache:
        return KVCache(self.cfg, self.dtype)

    def _attention(self, L: Layer, li: int, x: np.ndarray, pos: np.ndarray, cache: KVCache) -> np.ndarray:
        cfg = self.cfg
        n, hd = x.shape[0], cfg.head_dim
        q = (x @ L.wq.T).reshape(n, cfg.n_head, hd).transpose(1, 0, 2)  # (H, n, hd)
        k = (x @ L.wk.T).reshape(n, cfg.n_kv_head, hd).transpose(1, 0, 2)  # (KVH, n, hd)
        v = (x @ L.wv.T).reshape(n, cfg.n_kv_head, hd).transpose(1, 0, 2)
        q = rope(q, pos, cfg.rope_theta, self.rope_mode)
        k = rope(k, pos, cfg.rope_theta, self.rope_mode)
        start = cache.length
        cache.k[li][:, start:start + n] = k
        cache.v[li][:, start:start + n] = v
        total = start + n
        keys, vals = cache.k[li][:, :total], cache.v[li][:, :total]  # (KVH, total, hd)
        group = cfg.n_head // cfg.n_kv_head  # query head h reads KV head h // group
        qg = q.reshape(cfg.n_kv_head, group * n, hd)
        scores = (qg @ keys.transpose(0, 2, 1)).reshape(cfg.n_head, n, total)
        scores *= np.asarray(1.0 / np.sqrt(hd), self.dtype)
        # causal: query at absolute position pos[i] sees keys at positions <= pos[i]
        mask = np.arange(total)[None, :] > pos[:, None]  # (n, total)
        scores = np.where(mask[None], -np.inf, scores)
        probs = softmax(scores).reshape(cfg.n_kv_head, group * n, total)
        o = (probs @ vals).reshape(cfg.n_head, n, hd).transpose(1, 0, 2).reshape(n, cfg.n_head * hd)
        return o @ L.wo.T

    def forward(self, cache: KVCache, token_ids, all_logits: bool = True) -> np.ndarray:
        """Run token_ids (appended after the cache's tokens). Returns logits (n, vocab), or (1, vocab)
        for the last token when all_logits is False. Advances cache.length by len(token_ids)."""
        ids = np.asarray(token_ids, dtype=np.int64)
        if ids.ndim != 1 or ids.size == 0:
            raise ValueError("token_ids must be a non-empty 1-D sequence")
        if ids.min() < 0 or ids.max() >= self.cfg.vocab:
            raise ValueError(f"token id out of range [0, {self.cfg.vocab})")
        cfg, n = self.cfg, ids.size
        cache.reserve(cache.length + n)
        pos = np.arange(cache.length, cache.length + n)
        x = self.embd[ids]  # (n, hidden)
        for li, L in enumerate(self.layers):
            x = x + self._attention(L, li, rms_norm(x, L.attn_norm, cfg.rms_eps), pos, cache)
            h = rms_norm(x, L.ffn_norm, cfg.rms_eps)
            x = x + (silu(h @ L.w_gate.T) * (h @ L.w_up.T)) @ L.w_down.T
        cache.length += n
        if not all_logits:
            x = x[-1:]
        return rms_norm(x, self.out_norm, cfg.rms_eps) @ self.embd.T

    def generate_greedy(self, prompt_ids, n_new: int):
        """Greedy decoding. Returns (generated ids [n_new], step logits list): step k's logits are
        the distribution that chose generated token k (step 0 = last prompt position)."""
        cache = self.new_cache()
        cache.reserve(len(prompt_ids) + n_new)
        logits = self.forward(cache, prompt_ids, all_logits=False)[0]
        out, steps = [], []
        for k in range(n_new):
            steps.append(logits)
            tok = int(np.argmax(logits))
            out.append(tok)
            if k + 1 < n_new:
                logits = self.forward(cache, [tok], all_logits=False)[0]
        return out, steps

    def detokenize(self, ids) -> str:
        """GPT-2 byte-level BPE decoding from the GGUF vocab (special tokens shown verbatim)."""
        inv = _unicode_to_byte()
        data = bytearray()
        for i in ids:
            piece = self.tokens[i]
            if all(ch in inv for ch in piece):
                data.extend(inv[ch] for ch in piece)
            else:
                data.extend(piece.encode())
        return data.decode("utf-8", errors="replace")


def _unicode_to_byte() -> dict:
    """Inverse of GPT-2's bytes_to_unicode table (Radford et al. 2019, encoder.py)."""
    bs = list(range(ord("!"), ord("~") + 1)) + list(range(ord("¡"), ord("¬") + 1)) + \
        list(range(ord("®"), ord("ÿ") + 1))
    cs = bs[:]
    n = 0
    for b in range(256):
        if b not in bs:
            bs.append(b)
            cs.append(256 + n)
            n += 1
    return {chr(c): b for b, c in zip(bs, cs)}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--model", default="models/SmolLM2-135M-Instruct.Q4_1.gguf")
    ap.add_argument("--ids", required=True, help="comma-separated prompt token ids")
    ap.add_argument("--n", type=int, default=16, help="tokens to generate greedily")
    ap.add_argument("--dtype", choices=["float32", "float64"], default="float64")
    ap.add_argument("--rope", choices=["norm", "neox"], default="norm")
    a = ap.parse_args()
    model = Model.load(a.model, np.dtype(a.dtype), a.rope)
    ids = [int(s) for s in a.ids.split(",")]
    t0 = time.time()
    out, _ = model.generate_greedy(ids, a.n)
    dt = time.time() - t0
    print("ids:", out)
    print("text:", repr(model.detokenize(out)))
    print(f"{a.n} tokens in {dt:.2f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
