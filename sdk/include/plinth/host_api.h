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
  PLINTH_METRIC_COUNTER = 0,   /* monotonically increasing total (use metric_add) */
  PLINTH_METRIC_GAUGE = 1,     /* a value that goes up and down (metric_set / metric_add) */
  PLINTH_METRIC_HISTOGRAM = 2  /* observations (metric_observe); buckets chosen by the host */
} plinth_metric_type;

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
} plinth_host_api;

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* PLINTH_HOST_API_H */
