// kv_cache whose constructor throws a plain std::runtime_error: the SDK's guard turns it into
// PLINTH_ERR_INTERNAL with the exception's text.
#include <stdexcept>

#include "test_plugins.hpp"

namespace {
struct ThrowingKv : plinth_test::TestKv {
  explicit ThrowingKv(const plinth_create_args& a) : TestKv(a) {
    throw std::runtime_error("bad_create_throws: something broke inside");
  }
};
const plinth_kv_cache_vtable kTable = plinth::sdk::kv_cache_vtable<ThrowingKv>();
}  // namespace
PLINTH_PLUGIN("bad_create_throws", "0.1.0", PLINTH_KIND_KV_CACHE, "create throws",
              plinth_test::kKvSchema, &kTable)
