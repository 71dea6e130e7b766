/* A kv_cache written in plain C whose create returns an error status without writing a message:
 * the host must still report it, naming the library. */
#include "plinth/kv_cache.h"

static int32_t create(const plinth_create_args* a, plinth_instance** out, plinth_error* err) {
  (void)a;
  (void)out;
  (void)err;
  return PLINTH_ERR_INTERNAL;
}
static void destroy(plinth_instance* i) {
  (void)i;
}
static int32_t get_info(plinth_instance* i, plinth_kv_info* o, plinth_error* e) {
  return PLINTH_ERR_UNSUPPORTED;
}
static int32_t get_stats(plinth_instance* i, plinth_kv_stats* o, plinth_error* e) {
  return PLINTH_ERR_UNSUPPORTED;
}
static uint32_t blocks_needed(plinth_instance* i, plinth_seq_id s, uint32_t n) {
  return 0;
}
static int32_t allocate(plinth_instance* i, plinth_seq_id s, uint32_t n, plinth_block_copy* c,
                        uint32_t cap, uint32_t* nc, plinth_error* e) {
  return PLINTH_ERR_UNSUPPORTED;
}
static int32_t get_block_table(plinth_instance* i, plinth_seq_id s, const int32_t** b, uint32_t* n,
                               plinth_error* e) {
  return PLINTH_ERR_UNSUPPORTED;
}
static void free_seq(plinth_instance* i, plinth_seq_id s) {}
static int32_t truncate_seq(plinth_instance* i, plinth_seq_id s, uint32_t n, plinth_error* e) {
  return PLINTH_ERR_UNSUPPORTED;
}
static int32_t fork_seq(plinth_instance* i, plinth_seq_id p, plinth_seq_id c, plinth_error* e) {
  return PLINTH_ERR_UNSUPPORTED;
}
static int32_t attach(plinth_instance* i, plinth_seq_id s, const int32_t* b, uint32_t nb,
                      uint32_t nt, plinth_error* e) {
  return PLINTH_ERR_UNSUPPORTED;
}
static int32_t ref_blocks(plinth_instance* i, const int32_t* b, uint32_t n, plinth_error* e) {
  return PLINTH_ERR_UNSUPPORTED;
}
static int32_t unref_blocks(plinth_instance* i, const int32_t* b, uint32_t n, plinth_error* e) {
  return PLINTH_ERR_UNSUPPORTED;
}

static const plinth_kv_cache_vtable kTable = {sizeof(plinth_kv_cache_vtable),
                                              {sizeof(plinth_lifecycle), create, destroy, 0},
                                              get_info,
                                              get_stats,
                                              blocks_needed,
                                              allocate,
                                              get_block_table,
                                              free_seq,
                                              truncate_seq,
                                              fork_seq,
                                              attach,
                                              ref_blocks,
                                              unref_blocks};

PLINTH_EXPORT const plinth_plugin_descriptor* plinth_plugin_entry(void) {
  static const plinth_plugin_descriptor d = {sizeof(plinth_plugin_descriptor),
                                             PLINTH_ABI_MAJOR,
                                             PLINTH_ABI_MINOR,
                                             "bad_create_raw_error",
                                             "0.1.0",
                                             PLINTH_KIND_KV_CACHE,
                                             "C plugin, create fails silently",
                                             0,
                                             &kTable};
  return &d;
}
