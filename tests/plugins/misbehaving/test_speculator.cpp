// Good speculator for the host's tests (also built against ABI 1.0 by tests/plugins/abi_compat).
#include "test_plugins.hpp"

static const plinth_speculator_vtable kTable =
    plinth::sdk::speculator_vtable<plinth_test::TestSpeculator>();
PLINTH_PLUGIN("test_speculator", "0.1.0", PLINTH_KIND_SPECULATOR, "speculator for host tests",
              nullptr, &kTable)
