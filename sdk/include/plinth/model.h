/* plinth plugin ABI — the model as the host hands it to a backend: hyper-parameters and views of
 * the tensors of a memory-mapped GGUF file (GGUF v3, ggml tensor types). */
#ifndef PLINTH_MODEL_H
#define PLINTH_MODEL_H

#include "plinth/abi.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Tensor element types, numbered as ggml's ggml_type / the GGUF spec. The block layouts, sizes
 * and decodings are the format table of plinth/ggml_format.hpp (ggml-common.h): e.g. Q8_0 = 32
 * elements as f16 scale + 32 int8; Q4_K = 256 elements in 8 sub-blocks of 32 with 6-bit scales and
 * minimums. */
typedef enum plinth_dtype {
  PLINTH_DTYPE_F32 = 0,
  PLINTH_DTYPE_F16 = 1,
  PLINTH_DTYPE_Q4_0 = 2,
  PLINTH_DTYPE_Q4_1 = 3,
  PLINTH_DTYPE_Q5_0 = 6,
  PLINTH_DTYPE_Q5_1 = 7,
  PLINTH_DTYPE_Q8_0 = 8,
  PLINTH_DTYPE_Q2_K = 10,
  PLINTH_DTYPE_Q3_K = 11,
  PLINTH_DTYPE_Q4_K = 12,
  PLINTH_DTYPE_Q5_K = 13,
  PLINTH_DTYPE_Q6_K = 14,
  PLINTH_DTYPE_IQ4_NL = 20,
  PLINTH_DTYPE_IQ4_XS = 23,
  PLINTH_DTYPE_BF16 = 30
} plinth_dtype;

/* A read-only view of one tensor. */
typedef struct plinth_tensor_view {
  uint32_t struct_size;
  const char* name; /* GGUF tensor name, e.g. "blk.0.attn_q.weight" */
  int32_t dtype;    /* a plinth_dtype */
  uint32_t n_dims;  /* 1..4 */
  uint64_t dims[4]; /* ggml order: dims[0] (ne0) is contiguous; a weight of a linear layer
                       in -> out has dims {in, out}; unused dims are 1 */
  const void* data; /* host memory (the file mapping), nbytes long */
  uint64_t nbytes;
} plinth_tensor_view;

/* Hyper-parameters shared by every architecture (the decoder block's sizes); what differs between
 * architectures is plinth_arch_desc (ABI 1.4). */
typedef struct plinth_model_config {
  uint32_t struct_size;
  const char* architecture; /* general.architecture ("llama", "qwen2", ...); informational */
  uint32_t n_layers;
  uint32_t hidden_size; /* model width, elements */
  uint32_t n_heads;     /* query heads */
  uint32_t n_kv_heads;  /* key/value heads (grouped-query attention when < n_heads) */
  uint32_t head_dim;    /* elements per head */
  uint32_t ffn_size;    /* gated FFN intermediate size */
  uint32_t vocab_size;
  uint32_t context_length; /* maximum positions, tokens */
  float rope_theta;        /* RoPE base frequency */
  float rms_norm_eps;
  uint32_t rope_neox;       /* 0: rotate adjacent pairs (GGML "normal", LLaMA); 1: NeoX halves */
  uint32_t tied_embeddings; /* 1: the LM head is token_embd.weight (no output.weight) */
} plinth_model_config;

/* ABI 1.4: the architecture description. The host builds it from the file's `<arch>.*` keys and
 * tensors (one adapter per architecture, host/model/arch/); backends implement features, never
 * architectures (plinth_model_config.architecture is informational). Every math switch a model
 * needs beyond the plain LLaMA block (1.0's meaning of plinth_model_config) is a bit of
 * required_features; a backend answers PLINTH_ERR_UNSUPPORTED naming any bit it does not
 * implement, and the host refuses a backend whose ABI minor predates a bit (all bits below: 1.4).
 * Tensor names are llama.cpp's GGUF names (gguf-py constants.py, MODEL_TENSOR). */
/* blk.N.attn_{q,k,v}.bias [out] added to q, k, v */
#define PLINTH_ARCH_QKV_BIAS (1ull << 0)
/* per-head RMSNorm of q and k before RoPE, weights blk.N.attn_{q,k}_norm.weight [head_dim] */
#define PLINTH_ARCH_QK_NORM (1ull << 1)
/* RMSNorm of the attention / FFN output before its residual add: blk.N.post_attention_norm.weight,
 * blk.N.post_ffw_norm.weight [hidden] */
#define PLINTH_ARCH_POST_NORMS (1ull << 2)
/* gated FFN gelu_tanh(gate) * up instead of SiLU */
#define PLINTH_ARCH_GELU_TANH (1ull << 3)
/* blk.N.attn_qkv.weight {hidden, q + 2 kv}: rows of q, then k, then v (no attn_q/k/v) */
#define PLINTH_ARCH_FUSED_QKV (1ull << 4)
/* blk.N.ffn_up.weight {hidden, 2 ffn}: gate rows, then up rows (no ffn_gate) */
#define PLINTH_ARCH_FUSED_GATE_UP (1ull << 5)
/* embeddings multiplied by embed_scale */
#define PLINTH_ARCH_EMBED_SCALE (1ull << 6)
/* q.k scaled by attn_scale, not 1/sqrt(head_dim) */
#define PLINTH_ARCH_ATTN_SCALE (1ull << 7)
/* logits = c * tanh(logits / c), c = logit_softcap */
#define PLINTH_ARCH_LOGIT_SOFTCAP (1ull << 8)
/* logits multiplied by logit_scale */
#define PLINTH_ARCH_LOGIT_SCALE (1ull << 9)
/* RoPE on the first rope_dims of each head only */
#define PLINTH_ARCH_PARTIAL_ROTARY (1ull << 10)
/* pair i's angle divided by rope_freq_factors[i] (rope_freqs.weight) */
#define PLINTH_ARCH_ROPE_FREQ_FACTORS (1ull << 11)
/* some layer has sliding_window > 0 */
#define PLINTH_ARCH_SLIDING_WINDOW (1ull << 12)
/* some layer's rope_base differs from config.rope_theta, its rope_scale from 1, or its RoPE is
 * off */
#define PLINTH_ARCH_LAYER_ROPE (1ull << 13)
/* the attention and FFN outputs multiplied by residual_scale before their residual add (Granite's
 * residual_multiplier) */
#define PLINTH_ARCH_RESIDUAL_SCALE (1ull << 14)
/* no blk.N.attn_norm / ffn_norm: attention and FFN read the residual stream itself (OLMo 2, whose
 * block normalizes only outputs, with POST_NORMS) */
#define PLINTH_ARCH_NO_PRE_NORMS (1ull << 15)
/* RMSNorm of the whole q and k projections before RoPE (one norm over all heads, not per head):
 * blk.N.attn_q_norm.weight [n_heads * head_dim], blk.N.attn_k_norm.weight [n_kv_heads * head_dim]
 * (OLMo 2); never together with QK_NORM */
#define PLINTH_ARCH_QK_NORM_FULL (1ull << 16)
/* Every bit this header defines. */
#define PLINTH_ARCH_KNOWN_FEATURES ((1ull << 17) - 1)

/* One layer's values (an array item: no struct_size; read at plinth_arch_desc.layer_stride, so
 * later minors may append fields). */
typedef struct plinth_arch_layer {
  float rope_base;         /* RoPE base frequency theta of this layer */
  float rope_scale;        /* position multiplier (llama.cpp's freq_scale, 1 / linear factor) */
  uint32_t rope;           /* 1: RoPE applied; 0: no positional rotation in this layer */
  uint32_t sliding_window; /* 0: full causal attention; w > 0: the query at position p attends
                              keys at positions j with p - w < j <= p (llama.cpp's standard SWA) */
} plinth_arch_layer;

/* The architecture description (ABI 1.4). Owned by the host, valid as long as the
 * plinth_model_desc that points at it. Fields whose bit is clear hold their neutral value. */
typedef struct plinth_arch_desc {
  uint32_t struct_size;
  uint32_t layer_stride;      /* bytes from one layers[] item to the next (>= 16) */
  uint64_t required_features; /* PLINTH_ARCH_* bits the forward pass needs */
  uint32_t rope_dims;         /* rotated elements per head: head_dim, or fewer (PARTIAL_ROTARY);
                                 even */
  float embed_scale;          /* 1 unless EMBED_SCALE */
  float attn_scale;           /* 1 / sqrt(head_dim) unless ATTN_SCALE */
  float logit_softcap;        /* 0 unless LOGIT_SOFTCAP */
  float logit_scale;          /* 1 unless LOGIT_SCALE */
  uint32_t n_layers;          /* items in layers == config.n_layers */
  const plinth_arch_layer* layers; /* [n_layers] at layer_stride */
  const float* rope_freq_factors;  /* [rope_dims / 2] with ROPE_FREQ_FACTORS, else NULL */
  float residual_scale;            /* 1 unless RESIDUAL_SCALE */
} plinth_arch_desc;

/* The whole model. Owned by the host; valid, with every pointer inside, until the backend
 * instance it was given to is destroyed. */
typedef struct plinth_model_desc {
  uint32_t struct_size;
  plinth_model_config config;
  uint64_t num_tensors;
  const plinth_tensor_view* tensors; /* [num_tensors] */
  const char* path;                  /* the model file, for messages */
  /* ABI 1.4 (read with PLINTH_HAS_FIELD): the architecture description; NULL or absent means
   * 1.0's model, the plain LLaMA block that config alone describes. */
  const plinth_arch_desc* arch;
} plinth_model_desc;

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* PLINTH_MODEL_H */
