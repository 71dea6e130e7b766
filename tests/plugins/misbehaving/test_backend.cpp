// Good backend for the host's tests (test_plugins.hpp).
#include "test_plugins.hpp"

static const plinth_backend_vtable kTable = plinth::sdk::backend_vtable<plinth_test::TestBackend>();
PLINTH_PLUGIN("test_backend", "0.1.0", PLINTH_KIND_BACKEND, "fake backend for host tests",
              plinth_test::kBackendSchema, &kTable)
