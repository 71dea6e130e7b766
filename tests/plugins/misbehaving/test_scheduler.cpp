// Good scheduler for the host's tests (test_plugins.hpp).
#include "test_plugins.hpp"

static const plinth_scheduler_vtable kTable =
    plinth::sdk::scheduler_vtable<plinth_test::TestScheduler>();
PLINTH_PLUGIN("test_scheduler", "0.1.0", PLINTH_KIND_SCHEDULER, "scheduler for host tests",
              plinth_test::kSchedulerSchema, &kTable)
