/* plinth plugin ABI — what every kind's function table starts with: the instance lifecycle and
 * extension lookup, and the arguments of create (config, host API, model, wired dependencies). */
#ifndef PLINTH_PLUGIN_H
#define PLINTH_PLUGIN_H

#include "plinth/abi.h"
#include "plinth/host_api.h"
#include "plinth/model.h"

#ifdef __cplusplus
extern "C" {
#endif

struct plinth_backend_vtable;
struct plinth_kv_cache_vtable;
struct plinth_prefix_cache_vtable;
struct plinth_grammar_vocab;

/* A wired dependency: another plugin's table and instance. Both NULL when not wired. The host
 * creates dependencies first and destroys them last, so a ref stays valid until destroy. */
typedef struct plinth_backend_ref {
  const struct plinth_backend_vtable* vtable;
  plinth_instance* instance;
} plinth_backend_ref;
typedef struct plinth_kv_cache_ref {
  const struct plinth_kv_cache_vtable* vtable;
  plinth_instance* instance;
} plinth_kv_cache_ref;
typedef struct plinth_prefix_cache_ref {
  const struct plinth_prefix_cache_vtable* vtable;
  plinth_instance* instance;
} plinth_prefix_cache_ref;

/* Arguments of create. Creation order: backend, kv_cache, prefix_cache, scheduler, speculator,
 * graph_runner; each receives the refs of those before it that it may use:
 *   kv_cache: backend (KV layout, memory info, allocate_kv)
 *   prefix_cache: kv_cache (block references); since 1.1 also the model (its path is part of
 *                 every cache key, so blocks are never shared across models)
 *   scheduler: kv_cache, prefix_cache (may be NULL)
 *   speculator: backend, and since 1.2 the kv_cache (block tables, for a proposer that writes
 *               the target's KV) and the draft backend and draft model when the manifest names
 *               one (the host creates that second backend instance; the speculator owns its KV
 *               allocation, allocate_kv, and its block tables)
 *   graph_runner: backend (must offer the "plinth.cuda_stream/1" extension), and since 1.3 the
 *                 model (context length: the width of the captured block tables) and the
 *                 kv_cache (its block size, read in capture)
 *   grammar (1.4): the vocabulary (args->vocab); no other plugin. It is created last. */
typedef struct plinth_create_args {
  uint32_t struct_size;
  const plinth_host_api* host;    /* valid until destroy returns */
  const char* instance_name;      /* the manifest's name for this plugin, for log lines */
  const char* config_json;        /* the manifest's `config` object, already validated against the
                                     plugin's schema with defaults filled in; valid during create */
  const plinth_model_desc* model; /* backend, speculator, (1.1) prefix_cache and (1.3)
                                     graph_runner: the model; NULL for other kinds */
  plinth_backend_ref backend;
  plinth_kv_cache_ref kv_cache;
  plinth_prefix_cache_ref prefix_cache;
  /* ---- ABI 1.2 ---- */
  plinth_backend_ref draft_backend;     /* speculator: the manifest's draft backend, else NULL */
  const plinth_model_desc* draft_model; /* speculator: the draft backend's model, else NULL */
  /* ---- ABI 1.4 ---- */
  const struct plinth_grammar_vocab* vocab; /* grammar: the vocabulary (plinth/grammar.h), valid
                                               during create; NULL for other kinds */
} plinth_create_args;

/* Instance lifecycle, the second member of every kind's table. */
typedef struct plinth_lifecycle {
  uint32_t struct_size;
  /* Required. Creates an instance into *out (set only on success). args->config_json is the
   * manifest's `config` after the host validated it against the plugin's config_schema (types,
   * ranges, enums, no unknown keys) and filled in the schema's defaults: the plugin only reads it
   * (plinth/config.hpp, plinth::sdk::ConfigReader) and checks just the rules a schema cannot
   * express (one option against another or against the model). Errors: INVALID_ARGUMENT for such
   * a rule broken, UNSUPPORTED for a model it cannot run, OUT_OF_MEMORY. Must not throw; may start
   * threads, which destroy joins. */
  int32_t (*create)(const plinth_create_args* args, plinth_instance** out, plinth_error* err);
  /* Required. Frees everything the instance owns and joins its threads. inst may be NULL. */
  void (*destroy)(plinth_instance* inst);
  /* Optional (NULL = no extensions). Returns the extension table named `name`
   * ("<vendor>.<what>/<major>", e.g. "plinth.cuda_stream/1"), or NULL when absent. The table lives
   * as long as the instance. */
  const void* (*get_extension)(plinth_instance* inst, const char* name);
} plinth_lifecycle;

/* The common head of every kind's table: the host reads it without knowing the kind. */
typedef struct plinth_vtable_head {
  uint32_t struct_size;
  plinth_lifecycle lifecycle;
} plinth_vtable_head;

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* PLINTH_PLUGIN_H */
