// scheduler_continuous — the plugin instance: parses the config and builds the Scheduler over the
// wired kv_cache (args.kv_cache). plinth::sdk::scheduler_vtable<SchedulerPlugin>() makes it the C
// table (entry.cpp).
#pragma once

#include <plinth/scheduler.h>
#include <plinth/plugin.hpp>

#include <span>

#include "scheduler.hpp"

namespace plinth::scheduler_continuous {

class SchedulerPlugin {
 public:
  /// Throws std::invalid_argument for a bad config or no kv_cache wired.
  explicit SchedulerPlugin(const plinth_create_args& args);

  void add(const plinth_sched_request& req) { scheduler_.add(req); }
  void abort_seq(plinth_seq_id seq) { scheduler_.abort_seq(seq); }
  plinth_sched_output schedule(const plinth_sched_step& step) { return scheduler_.schedule(step); }
  void update(std::span<const plinth_sched_result> results) { scheduler_.update(results); }
  plinth_sched_stats stats() const { return scheduler_.stats(); }

  const Scheduler& scheduler() const { return scheduler_; }

 private:
  Scheduler scheduler_;
};

}  // namespace plinth::scheduler_continuous
