// Scheduler whose descriptor claims a minor newer than the host's (refused).
#include "test_plugins.hpp"

static const plinth_scheduler_vtable kTable =
    plinth::sdk::scheduler_vtable<plinth_test::TestScheduler>();
extern "C" PLINTH_EXPORT const plinth_plugin_descriptor* plinth_plugin_entry(void) {
  static const plinth_plugin_descriptor d = {sizeof(plinth_plugin_descriptor),
                                             PLINTH_ABI_MAJOR,
                                             PLINTH_ABI_MINOR + 1,
                                             "bad_abi_newer_minor",
                                             "0.1.0",
                                             PLINTH_KIND_SCHEDULER,
                                             "claims a minor newer than the host's (refused)",
                                             plinth_test::kSchedulerSchema,
                                             &kTable};
  return &d;
}
