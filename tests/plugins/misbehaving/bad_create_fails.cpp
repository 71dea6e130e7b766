// kv_cache whose create fails with a status and a message (through the SDK's guard).
#include "test_plugins.hpp"

namespace {
struct FailingKv : plinth_test::TestKv {
  explicit FailingKv(const plinth_create_args& a) : TestKv(a) {
    throw plinth::sdk::Error(PLINTH_ERR_INVALID_ARGUMENT,
                             "bad_create_fails: this cache needs block_size 32");
  }
};
const plinth_kv_cache_vtable kTable = plinth::sdk::kv_cache_vtable<FailingKv>();
}  // namespace
PLINTH_PLUGIN("bad_create_fails", "0.1.0", PLINTH_KIND_KV_CACHE, "create fails",
              plinth_test::kKvSchema, &kTable)
