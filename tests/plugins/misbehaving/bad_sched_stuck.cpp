// A scheduler that breaks the progress rule (scheduler.h, schedule): it accepts requests and
// never schedules any, as a scheduler does whose admission waits for KV that nothing will free.
// The engine must fail the waiting requests instead of spinning forever.
#include <set>

#include "plinth/plugin.hpp"
#include "plinth/scheduler.hpp"

namespace {

class StuckScheduler {
 public:
  explicit StuckScheduler(const plinth_create_args&) {}
  void add(const plinth_sched_request& r) { waiting_.insert(r.seq); }
  void abort_seq(plinth_seq_id s) { waiting_.erase(s); }
  plinth_sched_output schedule(const plinth_sched_step&) {
    plinth_sched_output out{};
    out.struct_size = sizeof(out);
    return out;  // nothing, ever
  }
  void update(std::span<const plinth_sched_result>) {}
  plinth_sched_stats stats() {
    plinth_sched_stats s{};
    s.struct_size = sizeof(s);
    s.num_waiting = static_cast<uint32_t>(waiting_.size());
    return s;
  }

 private:
  std::set<plinth_seq_id> waiting_;
};

const char* const kSchema = R"json({"type": "object", "additionalProperties": false,
  "properties": {}})json";
const plinth_scheduler_vtable kTable = plinth::sdk::scheduler_vtable<StuckScheduler>();

}  // namespace

PLINTH_PLUGIN("bad_sched_stuck", "0.1.0", PLINTH_KIND_SCHEDULER,
              "scheduler that never schedules (host tests: the stall check)", kSchema, &kTable)
