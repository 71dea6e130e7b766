// scheduler_continuous — the plugin library's one exported symbol: the scheduler table.
#include <plinth/scheduler.hpp>

#include "scheduler_config.hpp"
#include "scheduler_plugin.hpp"

namespace {
const plinth_scheduler_vtable kTable =
    plinth::sdk::scheduler_vtable<plinth::scheduler_continuous::SchedulerPlugin>();
}  // namespace

PLINTH_PLUGIN("scheduler_continuous", "0.1.0", PLINTH_KIND_SCHEDULER,
              "continuous batching: iteration-level scheduling, chunked prefill, preemption",
              plinth::scheduler_continuous::kConfigSchema, &kTable)
