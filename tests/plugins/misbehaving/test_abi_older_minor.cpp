// Scheduler built against the released ABI 1.0 headers (tests/fixtures/abi_1_0, first on its
// include path; see CMakeLists.txt): it declares minor 0 and has 1.0's table sizes, and a host of a
// newer minor loads it.
#include "test_plugins.hpp"

static_assert(PLINTH_ABI_MAJOR == 1 && PLINTH_ABI_MINOR == 0,
              "test_abi_older_minor must be built against tests/fixtures/abi_1_0/include");

static const plinth_scheduler_vtable kTable =
    plinth::sdk::scheduler_vtable<plinth_test::TestScheduler>();
PLINTH_PLUGIN("test_abi_older_minor", "0.1.0", PLINTH_KIND_SCHEDULER,
              "built against ABI 1.0 (an older or equal minor loads)",
              plinth_test::kSchedulerSchema, &kTable)
