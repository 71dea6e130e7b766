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

/* LLaMA-family hyper-parameters. */
typedef struct plinth_model_config {
  uint32_t struct_size;
  const char* architecture; /* "llama" */
  uint32_t n_layers;
  uint32_t hidden_size; /* model width, elements */
  uint32_t n_heads;     /* query heads */
  uint32_t n_kv_heads;  /* key/value heads (grouped-query attention when < n_heads) */
  uint32_t head_dim;    /* elements per head */
  uint32_t ffn_size;    /* SwiGLU intermediate size */
  uint32_t vocab_size;
  uint32_t context_length; /* maximum positions, tokens */
  float rope_theta;        /* RoPE base frequency */
  float rms_norm_eps;
  uint32_t rope_neox;       /* 0: rotate adjacent pairs (GGML "normal", LLaMA); 1: NeoX halves */
  uint32_t tied_embeddings; /* 1: the LM head is token_embd.weight (no output.weight) */
} plinth_model_config;

/* The whole model. Owned by the host; valid, with every pointer inside, until the backend
 * instance it was given to is destroyed. */
typedef struct plinth_model_desc {
  uint32_t struct_size;
  plinth_model_config config;
  uint64_t num_tensors;
  const plinth_tensor_view* tensors; /* [num_tensors] */
  const char* path;                  /* the model file, for messages */
} plinth_model_desc;

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* PLINTH_MODEL_H */
