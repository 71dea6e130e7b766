// Scheduler whose descriptor claims ABI 2.0 (another major: refused).
#include "test_plugins.hpp"

static const plinth_scheduler_vtable kTable =
    plinth::sdk::scheduler_vtable<plinth_test::TestScheduler>();
extern "C" PLINTH_EXPORT const plinth_plugin_descriptor* plinth_plugin_entry(void) {
  static const plinth_plugin_descriptor d = {sizeof(plinth_plugin_descriptor),
                                             2,
                                             0,
                                             "bad_abi_major2",
                                             "0.1.0",
                                             PLINTH_KIND_SCHEDULER,
                                             "claims ABI 2.0 (another major: refused)",
                                             plinth_test::kSchedulerSchema,
                                             &kTable};
  return &d;
}
