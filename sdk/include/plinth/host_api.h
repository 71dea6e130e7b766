/* plinth plugin ABI — the host API table every plugin instance receives at create: logging into the
 * host's spdlog logger and metrics registration (exported by the host as Prometheus text). */
#ifndef PLINTH_HOST_API_H
#define PLINTH_HOST_API_H

#include "plinth/abi.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Log levels, as spdlog's. */
typedef enum plinth_log_level {
  PLINTH_LOG_TRACE = 0,
  PLINTH_LOG_DEBUG = 1,
  PLINTH_LOG_INFO = 2,
  PLINTH_LOG_WARN = 3,
  PLINTH_LOG_ERROR = 4
} plinth_log_level;

/* Metric types, as Prometheus's. */
typedef enum plinth_metric_type {
  PLINTH_METRIC_COUNTER = 0,  /* monotonically increasing total (use metric_add) */
  PLINTH_METRIC_GAUGE = 1,    /* a value that goes up and down (metric_set / metric_add) */
  PLINTH_METRIC_HISTOGRAM = 2 /* observations (metric_observe); buckets chosen by the host */
} plinth_metric_type;

/* Flags of a plinth_seq_view. */
typedef enum plinth_seq_flags {
  PLINTH_SEQ_NO_PREFIX_CACHE = 1 /* never match nor insert this sequence (e.g. it wants prompt
                                    logprobs, which a cached prefix would not compute) */
} plinth_seq_flags;

/* What the host tells a plugin about one live sequence (ABI 1.1, plinth_host_api.get_seq). */
typedef struct plinth_seq_view {
  uint32_t struct_size;       /* sizeof(plinth_seq_view) as the caller compiled it */
  uint32_t num_tokens;        /* prompt + generated tokens so far */
  const int32_t* tokens;      /* [num_tokens] token ids, owned by the host */
  uint32_t num_prompt_tokens; /* the first num_prompt_tokens of tokens are the prompt */
  uint32_t flags;             /* plinth_seq_flags */
  const char* cache_salt;     /* [cache_salt_len] bytes (not NUL-terminated; may be NULL when the
                                 length is 0): the request's prefix-cache namespace. Sequences
                                 with different salts must never share a cached block. plinth's
                                 host passes a fixed-size digest (32 bytes, SHA-256) of the
                                 request's cache_salt, never the client's string, so a plugin
                                 that keeps it keeps a bounded amount per namespace. */
  uint32_t cache_salt_len;
} plinth_seq_view;

/* Provided by the host, valid (with everything it points to) from create until the instance's
 * destroy returns. All functions are thread-safe: a plugin's own worker threads may call them. */
typedef struct plinth_host_api {
  uint32_t struct_size; /* sizeof(plinth_host_api) as the host compiled it */
  uint16_t abi_major;   /* the host's PLINTH_ABI_MAJOR */
  uint16_t abi_minor;   /* the host's PLINTH_ABI_MINOR */
  void* ctx;            /* host context: pass it back as the first argument of every call */

  /* Writes `message` (UTF-8, copied) at `level` into the host's logger, tagged with `plugin`. */
  void (*log)(void* ctx, int32_t level, const char* plugin, const char* message);
  /* Non-zero when `level` would be written; lets a plugin skip formatting. */
  int32_t (*log_enabled)(void* ctx, int32_t level);

  /* Registers a metric; returns its id (>= 0), or -1 when `name` is not a valid Prometheus name
   * ([a-zA-Z_:][a-zA-Z0-9_:]*) or is already registered with another type. Registering the same
   * name and type twice returns the same id. `name` and `help` are copied. */
  int64_t (*metric_register)(void* ctx, const char* name, const char* help, int32_t type);
  /* Sets a gauge to `value`. Unknown ids are ignored. */
  void (*metric_set)(void* ctx, int64_t id, double value);
  /* Adds `delta` to a counter (delta >= 0) or a gauge. Unknown ids are ignored. */
  void (*metric_add)(void* ctx, int64_t id, double delta);
  /* Records one observation of a histogram (seconds for latencies). Unknown ids are ignored. */
  void (*metric_observe)(void* ctx, int64_t id, double value);

  /* ---- ABI 1.1 (check PLINTH_HAS_FIELD(api, plinth_host_api, get_seq); may be NULL) ---- */

  /* Describes the live sequence `seq` into *out (the caller sets out->struct_size; the host fills
   * what both know). Returns PLINTH_OK, or PLINTH_ERR_NOT_FOUND for a sequence the engine does
   * not hold (finished, aborted, never added). NOT thread-safe, unlike the rest of this table:
   * only from the engine thread, inside a scheduler or speculator call. The pointers in *out stay
   * valid until that plugin call returns. */
  int32_t (*get_seq)(void* ctx, plinth_seq_id seq, plinth_seq_view* out);
} plinth_host_api;

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* PLINTH_HOST_API_H */
