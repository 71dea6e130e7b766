// A prefix_cache built with the current SDK whose table is only as large as ABI 1.0's (no
// match_key / insert_key), declaring minor PLINTH_TEST_DECLARED_MINOR: with 1 the host refuses it
// (a 1.1 table is larger), with 0 it loads, as a plugin built with the 1.0 SDK would.
#include "test_plugins.hpp"

static_assert(PLINTH_ABI_MINOR >= 1, "needs the current SDK, which knows ABI 1.0's sizes");

static const plinth_prefix_cache_vtable kTable = [] {
  plinth_prefix_cache_vtable v = plinth::sdk::prefix_cache_vtable<plinth_test::TestPrefixCache>();
  v.struct_size = PLINTH_ABI_1_0_SIZEOF_PREFIX_CACHE_VTABLE;
  v.match_key = nullptr;
  v.insert_key = nullptr;
  return v;
}();

extern "C" PLINTH_EXPORT const plinth_plugin_descriptor* plinth_plugin_entry(void) {
  static const plinth_plugin_descriptor d = {sizeof(plinth_plugin_descriptor),
                                             PLINTH_ABI_MAJOR,
                                             PLINTH_TEST_DECLARED_MINOR,
                                             PLINTH_TEST_NAME,
                                             "0.1.0",
                                             PLINTH_KIND_PREFIX_CACHE,
                                             "prefix_cache table of ABI 1.0's size",
                                             nullptr,
                                             &kTable};
  return &d;
}
