// A scheduler that breaks the id rule (scheduler.h, schedule: only sequences given to add that
// have not finished): it is scheduler_continuous, except that its `at_step`-th decision that
// schedules anything also names sequence 999999, which the host never added. The engine must fail
// the sequences of that step alone and go on serving.
#include <span>
#include <string>

#include "plinth/plugin.hpp"
#include "plinth/scheduler.hpp"
#include "scheduler_plugin.hpp"
#include "wrapped_plugin.hpp"

namespace {

constexpr plinth_seq_id kUnknown = 999999;

class UnknownIdScheduler {
 public:
  explicit UnknownIdScheduler(const plinth_create_args& a)
      : at_step_(plinth_test::own_config(a).value("at_step", 1u)),
        inner_config_(plinth_test::inner_config(a)),
        inner_(plinth_test::with_config(a, inner_config_)) {}
  void add(const plinth_sched_request& r) { inner_.add(r); }
  void abort_seq(plinth_seq_id s) { inner_.abort_seq(s); }
  plinth_sched_output schedule(const plinth_sched_step& step) {
    plinth_sched_output out = inner_.schedule(step);
    if (out.num_scheduled == 0 || ++steps_ != at_step_) return out;
    return extended_.extend(out, kUnknown, 0);
  }
  void update(std::span<const plinth_sched_result> r) { inner_.update(r); }
  plinth_sched_stats stats() { return inner_.stats(); }

 private:
  uint32_t at_step_;
  uint32_t steps_ = 0;  // decisions that scheduled something
  std::string inner_config_;
  plinth::scheduler_continuous::SchedulerPlugin inner_;
  plinth_test::ExtendedOutput extended_;
};

const char* const kSchema = R"json({"type": "object", "additionalProperties": false,
  "properties": {
    "at_step": {"type": "integer", "minimum": 1, "default": 1,
                "description": "the decision (counting those that schedule something) that also names an unknown sequence"},
    "inner": {"type": "object", "default": {},
              "description": "config of the wrapped scheduler_continuous"}}})json";
const plinth_scheduler_vtable kTable = plinth::sdk::scheduler_vtable<UnknownIdScheduler>();

}  // namespace

PLINTH_PLUGIN("bad_sched_unknown", "0.1.0", PLINTH_KIND_SCHEDULER,
              "scheduler_continuous that once schedules an unknown sequence (host tests)", kSchema,
              &kTable)
