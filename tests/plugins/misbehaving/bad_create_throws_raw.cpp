// kv_cache whose hand-written create lets a C++ exception escape across the C ABI (forbidden):
// the host must catch it and refuse the plugin rather than terminate.
#include <stdexcept>

#include "test_plugins.hpp"

namespace {
plinth_kv_cache_vtable make_table() {
  plinth_kv_cache_vtable t = plinth::sdk::kv_cache_vtable<plinth_test::TestKv>();
  t.lifecycle.create = [](const plinth_create_args*, plinth_instance**, plinth_error*) -> int32_t {
    throw std::runtime_error("bad_create_throws_raw: escaped");
  };
  return t;
}
const plinth_kv_cache_vtable kTable = make_table();
}  // namespace
PLINTH_PLUGIN("bad_create_throws_raw", "0.1.0", PLINTH_KIND_KV_CACHE, "create throws raw", nullptr,
              &kTable)
