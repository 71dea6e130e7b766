// A scheduler that breaks the id rule (scheduler.h, schedule: only sequences given to add that
// have not finished): it is scheduler_continuous, except that once the first sequence finishes it
// schedules that sequence again, once, in the next decision that schedules anything. The engine
// must fail the sequences of that step alone and go on serving.
#include <optional>
#include <span>
#include <string>

#include "plinth/plugin.hpp"
#include "plinth/scheduler.hpp"
#include "scheduler_plugin.hpp"
#include "wrapped_plugin.hpp"

namespace {

class FinishedIdScheduler {
 public:
  explicit FinishedIdScheduler(const plinth_create_args& a)
      : inner_config_(plinth_test::inner_config(a)),
        inner_(plinth_test::with_config(a, inner_config_)) {}
  void add(const plinth_sched_request& r) { inner_.add(r); }
  void abort_seq(plinth_seq_id s) { inner_.abort_seq(s); }
  plinth_sched_output schedule(const plinth_sched_step& step) {
    plinth_sched_output out = inner_.schedule(step);
    if (out.num_scheduled == 0 || !finished_ || done_) return out;
    done_ = true;
    return extended_.extend(out, finished_->seq, finished_->num_tokens - 1);
  }
  void update(std::span<const plinth_sched_result> results) {
    for (const plinth_sched_result& r : results) {
      if (r.finished != 0 && !finished_) finished_ = r;
    }
    inner_.update(results);
  }
  plinth_sched_stats stats() { return inner_.stats(); }

 private:
  std::string inner_config_;
  plinth::scheduler_continuous::SchedulerPlugin inner_;
  std::optional<plinth_sched_result> finished_;  // the first sequence that finished
  bool done_ = false;                            // it was scheduled again
  plinth_test::ExtendedOutput extended_;
};

const char* const kSchema = R"json({"type": "object", "additionalProperties": false,
  "properties": {
    "inner": {"type": "object", "default": {},
              "description": "config of the wrapped scheduler_continuous"}}})json";
const plinth_scheduler_vtable kTable = plinth::sdk::scheduler_vtable<FinishedIdScheduler>();

}  // namespace

PLINTH_PLUGIN("bad_sched_finished", "0.1.0", PLINTH_KIND_SCHEDULER,
              "scheduler_continuous that schedules a finished sequence once (host tests)", kSchema,
              &kTable)
