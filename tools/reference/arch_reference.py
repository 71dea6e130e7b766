#!/usr/bin/env python3
"""Independent NumPy float64 reference of the decoder architectures plinth runs.

Reads a GGUF file with the `gguf` package and builds the architecture description from the file's
`<arch>.*` keys and tensor names as llama.cpp's loader (src/llama-model.cpp, src/models/<arch>.cpp)
defines them -- the same description plinth's host adapters build (sdk/include/plinth/model.h,
plinth_arch_desc), written again here from the math, sharing no code with plinth:

  llama   plain pre-norm block, GGML "normal" RoPE (adjacent pairs), optional rope_freqs.weight
  qwen2   + Q/K/V biases, NeoX RoPE
  qwen3   + per-head RMSNorm of q and k before RoPE, NeoX RoPE
  gemma3  sqrt(hidden) embedding scale, q/k norm, post-attention / post-FFN norms, GELU-tanh gated
          FFN, sliding-window layers (window, own RoPE base, no RoPE scaling), linear RoPE scaling on
          the global layers, optional final logit softcap, NeoX RoPE
  phi3    fused attn_qkv and fused gate|up in ffn_up, partial rotary (rope.dimension_count), NeoX
  granite llama with embedding_scale (x), attention.scale (q.k), residual_scale (each sub-block's
          output before its residual add) and logit_scale (logits divided by it); RoPE off in
          every layer when rope.scaling.finetuned is false
  olmo2   no pre-norms (attention and FFN read the residual stream), RMSNorm of the whole q and k
          (all heads at once) before RoPE, post-attention / post-FFN norms, NeoX RoPE
  smollm3 llama with no RoPE in every 4th layer (layer il with (il + 1) % 4 == 0)

Everything is float64: embeddings, norms (mean of squares), RoPE angles
(pos * scale * base^(-2i/rope_dims) / factor_i), softmax, GELU-tanh.

    m = ArchModel.load(path)
    logits = m.logits(ids)        # (len(ids), vocab): every position, one causal pass
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np

import gguf


@dataclasses.dataclass
class ArchDesc:
    arch: str
    n_layer: int
    hidden: int
    n_head: int
    n_kv_head: int
    head_dim: int
    ffn: int
    vocab: int
    rms_eps: float
    neox: bool
    rope_dims: int
    rope_base: list  # per layer
    rope_scale: list  # per layer (position multiplier)
    window: list  # per layer, 0 = full causal
    embed_scale: float = 1.0
    attn_scale: float = 0.0
    softcap: float = 0.0
    gelu: bool = False
    freq_factors: np.ndarray | None = None
    rope_on: list | None = None  # per layer; None = every layer
    residual_scale: float = 1.0
    logit_divisor: float = 1.0
    pre_norms: bool = True
    qk_norm_full: bool = False


def _get(r: gguf.GGUFReader, key: str, default=None):
    f = r.fields.get(key)
    if f is None:
        if default is None:
            raise KeyError(f"GGUF key '{key}' missing")
        return default
    return f.contents()


def _tensors(r: gguf.GGUFReader) -> dict:
    out = {}
    for t in r.tensors:
        a = np.asarray(gguf.quants.dequantize(t.data, t.tensor_type), dtype=np.float64)
        out[t.name] = a
    return out


def read_desc(r: gguf.GGUFReader, t: dict) -> ArchDesc:
    arch = str(_get(r, "general.architecture"))
    if arch not in ("llama", "qwen2", "qwen3", "gemma3", "phi3", "granite", "olmo2", "smollm3"):
        raise ValueError(f"architecture '{arch}' not in this reference")
    k = lambda s: f"{arch}.{s}"  # noqa: E731
    n_layer = int(_get(r, k("block_count")))
    hidden = int(_get(r, k("embedding_length")))
    n_head = int(_get(r, k("attention.head_count")))
    n_kv = int(_get(r, k("attention.head_count_kv"), n_head))
    head_dim = int(_get(r, k("attention.key_length"), hidden // n_head))
    rope_dims = int(_get(r, k("rope.dimension_count"), head_dim))
    base = float(_get(r, k("rope.freq_base"), 10000.0))
    factor = float(_get(r, k("rope.scaling.factor"), 0.0))
    stype = str(_get(r, k("rope.scaling.type"), "linear"))
    scale = 1.0 / factor if factor != 0.0 and stype == "linear" else 1.0
    vocab = t["token_embd.weight"].shape[0]
    d = ArchDesc(arch=arch, n_layer=n_layer, hidden=hidden, n_head=n_head, n_kv_head=n_kv,
                 head_dim=head_dim, ffn=int(_get(r, k("feed_forward_length"))), vocab=vocab,
                 rms_eps=float(_get(r, k("attention.layer_norm_rms_epsilon"))),
                 neox=arch not in ("llama", "granite", "smollm3"), rope_dims=rope_dims, rope_base=[base] * n_layer,
                 rope_scale=[scale] * n_layer, window=[0] * n_layer)
    d.attn_scale = 1.0 / math.sqrt(head_dim)
    if "rope_freqs.weight" in t:
        d.freq_factors = t["rope_freqs.weight"]
    d.rope_on = [True] * n_layer
    if arch == "granite":
        d.embed_scale = float(_get(r, k("embedding_scale"), 0.0)) or 1.0
        d.attn_scale = float(_get(r, k("attention.scale"), 0.0)) or d.attn_scale
        d.residual_scale = float(_get(r, k("residual_scale"), 0.0)) or 1.0
        d.logit_divisor = float(_get(r, k("logit_scale")))
        if not bool(_get(r, k("rope.scaling.finetuned"), True)):
            d.rope_on = [False] * n_layer
    if arch == "smollm3":
        d.rope_on = [(il + 1) % 4 != 0 for il in range(n_layer)]
    if arch == "olmo2":
        d.pre_norms = False
        d.qk_norm_full = True
    if arch == "gemma3":
        d.embed_scale = math.sqrt(hidden)
        d.gelu = True
        if n_layer == 62:
            d.attn_scale = 1.0 / math.sqrt(hidden // n_head)
        d.softcap = float(_get(r, k("final_logit_softcapping"), 0.0))
        n_swa = int(_get(r, k("attention.sliding_window"), 0))
        if n_swa > 0:
            pattern = int(_get(r, k("attention.sliding_window_pattern"), 6))
            base_swa = float(_get(r, k("rope.freq_base_swa"), 10000.0))
            for il in range(n_layer):
                if il % pattern < pattern - 1:  # local layer
                    d.window[il] = n_swa
                    d.rope_base[il] = base_swa
                    d.rope_scale[il] = 1.0
    return d


def rms_norm(x: np.ndarray, w: np.ndarray, eps: float) -> np.ndarray:
    return x / np.sqrt(np.mean(x * x, axis=-1, keepdims=True) + eps) * w


def rope(x: np.ndarray, pos: np.ndarray, d: ArchDesc, base: float, scale: float) -> np.ndarray:
    """x (heads, n, head_dim): the first rope_dims of each head rotated, the rest unchanged."""
    nd = d.rope_dims
    inv = scale * base ** (-np.arange(0, nd, 2, dtype=np.float64) / nd)
    if d.freq_factors is not None:
        inv = inv / d.freq_factors
    ang = pos.astype(np.float64)[:, None] * inv[None, :]
    cos, sin = np.cos(ang), np.sin(ang)
    out = x.copy()
    if d.neox:
        a, b = x[..., : nd // 2], x[..., nd // 2: nd]
        out[..., : nd // 2] = a * cos - b * sin
        out[..., nd // 2: nd] = a * sin + b * cos
    else:
        a, b = x[..., 0:nd:2], x[..., 1:nd:2]
        out[..., 0:nd:2] = a * cos - b * sin
        out[..., 1:nd:2] = a * sin + b * cos
    return out


def gelu_tanh(x: np.ndarray) -> np.ndarray:
    return 0.5 * x * (1.0 + np.tanh(math.sqrt(2.0 / math.pi) * (x + 0.044715 * x ** 3)))


def silu(x: np.ndarray) -> np.ndarray:
    return x / (1.0 + np.exp(-x))


class ArchModel:
    def __init__(self, desc: ArchDesc, t: dict):
        self.d, self.t = desc, t

    @staticmethod
    def load(path: str) -> "ArchModel":
        r = gguf.GGUFReader(path)
        t = _tensors(r)
        return ArchModel(read_desc(r, t), t)

    def _w(self, name: str):
        return self.t.get(name)

    def _attention(self, il: int, h: np.ndarray, pos: np.ndarray) -> np.ndarray:
        d, p = self.d, f"blk.{il}."
        n, hd = h.shape[0], d.head_dim
        qd, kd = d.n_head * hd, d.n_kv_head * hd
        if self._w(p + "attn_qkv.weight") is not None:
            qkv = h @ self.t[p + "attn_qkv.weight"].T
            q, k, v = qkv[:, :qd], qkv[:, qd:qd + kd], qkv[:, qd + kd:]
        else:
            q = h @ self.t[p + "attn_q.weight"].T
            k = h @ self.t[p + "attn_k.weight"].T
            v = h @ self.t[p + "attn_v.weight"].T
        if self._w(p + "attn_q.bias") is not None:
            q = q + self.t[p + "attn_q.bias"]
            k = k + self.t[p + "attn_k.bias"]
            v = v + self.t[p + "attn_v.bias"]
        if d.qk_norm_full:  # one RMSNorm over all heads of q, and of k
            q = rms_norm(q, self.t[p + "attn_q_norm.weight"], d.rms_eps)
            k = rms_norm(k, self.t[p + "attn_k_norm.weight"], d.rms_eps)
        q = q.reshape(n, d.n_head, hd).transpose(1, 0, 2)
        k = k.reshape(n, d.n_kv_head, hd).transpose(1, 0, 2)
        v = v.reshape(n, d.n_kv_head, hd).transpose(1, 0, 2)
        if self._w(p + "attn_q_norm.weight") is not None and not d.qk_norm_full:
            q = rms_norm(q, self.t[p + "attn_q_norm.weight"], d.rms_eps)
            k = rms_norm(k, self.t[p + "attn_k_norm.weight"], d.rms_eps)
        if d.rope_on[il]:
            q = rope(q, pos, d, d.rope_base[il], d.rope_scale[il])
            k = rope(k, pos, d, d.rope_base[il], d.rope_scale[il])
        group = d.n_head // d.n_kv_head
        k = np.repeat(k, group, axis=0)
        v = np.repeat(v, group, axis=0)
        s = (q @ k.transpose(0, 2, 1)) * d.attn_scale  # (H, n, n)
        j, i = pos[None, :], pos[:, None]
        mask = j > i
        if d.window[il] > 0:
            mask = mask | (i - j >= d.window[il])
        s = np.where(mask[None], -np.inf, s)
        s = s - s.max(axis=-1, keepdims=True)
        e = np.exp(s)
        pr = e / e.sum(axis=-1, keepdims=True)
        o = (pr @ v).transpose(1, 0, 2).reshape(n, qd)
        return o @ self.t[p + "attn_output.weight"].T

    def _ffn(self, il: int, h: np.ndarray) -> np.ndarray:
        d, p = self.d, f"blk.{il}."
        if self._w(p + "ffn_gate.weight") is None:  # phi3: ffn_up holds gate | up
            gu = h @ self.t[p + "ffn_up.weight"].T
            g, u = gu[:, : d.ffn], gu[:, d.ffn:]
        else:
            g = h @ self.t[p + "ffn_gate.weight"].T
            u = h @ self.t[p + "ffn_up.weight"].T
        a = (gelu_tanh(g) if d.gelu else silu(g)) * u
        return a @ self.t[p + "ffn_down.weight"].T

    def logits(self, ids) -> np.ndarray:
        """Logits (len(ids), vocab) at every position of one causal pass from position 0."""
        d = self.d
        ids = np.asarray(ids, dtype=np.int64)
        pos = np.arange(ids.size)
        x = self.t["token_embd.weight"][ids] * d.embed_scale
        for il in range(d.n_layer):
            p = f"blk.{il}."
            h = rms_norm(x, self.t[p + "attn_norm.weight"], d.rms_eps) if d.pre_norms else x
            o = self._attention(il, h, pos)
            if self._w(p + "post_attention_norm.weight") is not None:
                o = rms_norm(o, self.t[p + "post_attention_norm.weight"], d.rms_eps)
            x = x + d.residual_scale * o
            h = rms_norm(x, self.t[p + "ffn_norm.weight"], d.rms_eps) if d.pre_norms else x
            f = self._ffn(il, h)
            if self._w(p + "post_ffw_norm.weight") is not None:
                f = rms_norm(f, self.t[p + "post_ffw_norm.weight"], d.rms_eps)
            x = x + d.residual_scale * f
        head = self._w("output.weight")
        if head is None:
            head = self.t["token_embd.weight"]
        out = rms_norm(x, self.t["output_norm.weight"], d.rms_eps) @ head.T / d.logit_divisor
        if d.softcap > 0.0:
            out = d.softcap * np.tanh(out / d.softcap)
        return out
