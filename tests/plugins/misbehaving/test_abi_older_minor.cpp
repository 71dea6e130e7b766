// Scheduler whose descriptor built against ABI 1.0 (an older or equal minor loads).
#include "test_plugins.hpp"

static const plinth_scheduler_vtable kTable =
    plinth::sdk::scheduler_vtable<plinth_test::TestScheduler>();
extern "C" PLINTH_EXPORT const plinth_plugin_descriptor* plinth_plugin_entry(void) {
  static const plinth_plugin_descriptor d = {
      sizeof(plinth_plugin_descriptor),
      1,
      0,
      "test_abi_older_minor",
      "0.1.0",
      PLINTH_KIND_SCHEDULER,
      "built against ABI 1.0 (an older or equal minor loads)",
      plinth_test::kSchedulerSchema,
      &kTable};
  return &d;
}
