/* plinth plugin ABI — core definitions: versions, status codes, errors, plugin kinds, the plugin
 * descriptor and the one exported entry symbol.
 *
 * The ABI is C so that a plugin built with another compiler or C++ standard library still loads.
 * Rules (docs/architecture.md, 'The ABI and its versions'), after Triton's backend API, ONNX
 * Runtime's C API and ggml's loadable backends:
 *  - Compatibility: a plugin loads when its ABI major equals the host's and its minor is <= the
 *    host's minor.
 *  - Structs and function tables only grow at the end. Every struct that crosses the boundary
 * starts with `uint32_t struct_size` (sizeof as the writer compiled it); a reader ignores fields
 * past struct_size and treats them as absent (PLINTH_HAS_FIELD). The size of every struct and table
 *    of each released minor is frozen in abi_versions.h and pinned in abi_layout_check.h.
 *  - Out-structs (a callee fills a struct the caller owns): the caller sets struct_size to its own
 *    sizeof; the callee writes at most that many bytes and sets struct_size to what it wrote
 *    (plinth::sdk::write_out does both). A caller older than the callee is never overrun; a
 *    caller newer than the callee finds the newer fields absent.
 *  - History: 1.0 first release; 1.1 adds plinth_host_api.get_seq, plinth_sched_request.parent,
 *    and plinth_prefix_cache_vtable.match_key / insert_key (salted keys) with more stats; 1.2
 *    adds speculative decoding's needs: plinth_spec_verify.uniforms,
 *    plinth_spec_proposal.draft_probs, plinth_spec_stats.num_drafts,
 *    plinth_speculator_vtable.num_lookahead_slots / propose_batch, plinth_spec_propose_args, and
 *    the draft backend and model in plinth_create_args; 1.3 adds device-side greedy sampling:
 *    plinth_batch.argmax_only, plinth_forward_output.argmax_ids; 1.4 adds the architecture
 *    description: plinth_model_desc.arch (plinth_arch_desc with its residual_scale,
 *    plinth_arch_layer, the 17 PLINTH_ARCH_* feature bits of model.h), the grammar kind
 *    (plinth/grammar.h) and plinth_create_args.vocab. 1.4 is not released yet: its structs may
 *    still grow before the release freezes abi_versions.h's 1.4 sizes.
 *  - Array structs (items of an array, no struct_size: plinth_spec_verify, plinth_sched_result)
 *    also grow only at the end; the host passes such an array at the stride of the minor the
 *    plugin declares (PLINTH_ABI_1_<m>_SIZEOF_<NAME>), so an older plugin indexes it correctly.
 *  - Nothing throws across the boundary; fallible functions return a plinth_status (int32_t) and
 *    fill an optional caller-owned plinth_error.
 *  - Whoever allocates frees. Pointers handed to a callee are valid only for the call unless the
 *    function's comment says otherwise.
 *  - Unless a function says otherwise, every instance function is called from one thread at a time
 *    (the host's engine thread); plugins need no locking for that.
 */
#ifndef PLINTH_ABI_H
#define PLINTH_ABI_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ABI version of these headers. Major: incompatible change. Minor: additions at the end of structs
 * and tables, new kinds of extension. */
#define PLINTH_ABI_MAJOR 1
#define PLINTH_ABI_MINOR 4

#if defined(_WIN32)
#define PLINTH_EXPORT __declspec(dllexport)
#else
#define PLINTH_EXPORT __attribute__((visibility("default")))
#endif

/* Non-zero when the struct at `ptr` (a pointer to `type`, whose first member is struct_size) was
 * written by a side that knows `field`: its struct_size covers the whole field. Use it for every
 * field added after 1.0 before reading it from a struct or table the other side filled. */
#define PLINTH_HAS_FIELD(ptr, type, field)      \
  (plinth_struct_size_of((const void*)(ptr)) >= \
   offsetof(type, field) + sizeof(((const type*)0)->field))

/* The struct_size (the first member of every versioned struct and table) at `p`; 0 for NULL. */
static inline size_t plinth_struct_size_of(const void* p) {
  return p == NULL ? 0 : (size_t)(*(const uint32_t*)p);
}

/* Status codes returned by every fallible ABI function (as int32_t). */
typedef enum plinth_status {
  PLINTH_OK = 0,
  PLINTH_ERR_INVALID_ARGUMENT =
      1,                        /* the caller's input is wrong; the message names it and the fix */
  PLINTH_ERR_OUT_OF_MEMORY = 2, /* a host or device allocation failed */
  PLINTH_ERR_NO_CAPACITY = 3,   /* no free KV blocks now; retry after freeing or preempting */
  PLINTH_ERR_NOT_FOUND = 4,     /* unknown sequence id, block, extension ... */
  PLINTH_ERR_UNSUPPORTED = 5,   /* valid request this plugin cannot serve (dtype, model arch) */
  PLINTH_ERR_INTERNAL = 6       /* a bug or an unexpected exception inside the callee */
} plinth_status;

/* Capacity of plinth_error.message in bytes, including the terminating NUL. */
#define PLINTH_ERROR_MESSAGE_CAPACITY 1024

/* An error value. Owned by the caller (usually on its stack); the callee writes `status` and a
 * NUL-terminated UTF-8 `message` (truncated to fit) when it fails, and leaves it untouched when it
 * succeeds. Every function taking `plinth_error* err` accepts err == NULL. */
typedef struct plinth_error {
  uint32_t struct_size; /* sizeof(plinth_error) as the caller compiled it */
  int32_t status;       /* a plinth_status */
  char message[PLINTH_ERROR_MESSAGE_CAPACITY];
} plinth_error;

/* Plugin kinds (docs/manifest.md, 'Kinds'). A manifest has exactly one backend, kv_cache and
 * scheduler, and at most one of each other kind. */
typedef enum plinth_plugin_kind {
  PLINTH_KIND_BACKEND = 1,      /* model execution: plinth_backend_vtable */
  PLINTH_KIND_KV_CACHE = 2,     /* KV block management: plinth_kv_cache_vtable */
  PLINTH_KIND_SCHEDULER = 3,    /* per-step batching decisions: plinth_scheduler_vtable */
  PLINTH_KIND_PREFIX_CACHE = 4, /* prefix reuse over KV blocks: plinth_prefix_cache_vtable */
  PLINTH_KIND_SPECULATOR = 5,   /* draft proposal + verification: plinth_speculator_vtable */
  PLINTH_KIND_GRAPH_RUNNER = 6, /* captured decode steps: plinth_graph_runner_vtable */
  PLINTH_KIND_GRAMMAR = 7       /* (1.4) constrained decoding: plinth_grammar_vtable */
} plinth_plugin_kind;

/* What plinth_plugin_entry returns. Static storage inside the plugin: valid while the library is
 * loaded; the host never writes to it. */
typedef struct plinth_plugin_descriptor {
  uint32_t struct_size;      /* sizeof(plinth_plugin_descriptor) as the plugin compiled it */
  uint16_t abi_major;        /* PLINTH_ABI_MAJOR the plugin was built against */
  uint16_t abi_minor;        /* PLINTH_ABI_MINOR the plugin was built against */
  const char* name;          /* short unique name, [a-z0-9_]+, e.g. "kv_paged" */
  const char* version;       /* the plugin's own version, e.g. "0.1.0" */
  int32_t kind;              /* a plinth_plugin_kind */
  const char* description;   /* one line for `plinth plugins list`; may be NULL */
  const char* config_schema; /* JSON Schema (draft 2020-12 subset: type, enum, minimum, maximum,
                                required, additionalProperties, default, items, properties,
                                description) of the manifest's `config` object; NULL = only {} */
  const void* vtable;        /* the kind's table: const plinth_<kind>_vtable* */
} plinth_plugin_descriptor;

/* The one symbol every plugin library exports:
 *   PLINTH_EXPORT const plinth_plugin_descriptor* plinth_plugin_entry(void);
 * It must not fail, allocate, or touch global state beyond returning static data; the host calls
 * it once right after loading, from any thread. */
#define PLINTH_PLUGIN_ENTRY_SYMBOL "plinth_plugin_entry"
typedef const plinth_plugin_descriptor* (*plinth_plugin_entry_fn)(void);

/* An instance of a plugin: opaque to the host, created by the kind's lifecycle.create and destroyed
 * by lifecycle.destroy. A library stays loaded until all its instances are destroyed. */
typedef struct plinth_instance plinth_instance;

/* Identifier of a sequence (one request's token stream; n > 1 completions are n sequences). Chosen
 * by the host, unique for the engine's life. */
typedef uint64_t plinth_seq_id;

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* PLINTH_ABI_H */
