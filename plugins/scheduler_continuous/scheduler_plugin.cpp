#include "scheduler_plugin.hpp"

#include <string>

namespace plinth::scheduler_continuous {

namespace {
sdk::Host host_of(const plinth_create_args& args) {
  return sdk::Host(args.host,
                   args.instance_name != nullptr ? args.instance_name : "scheduler_continuous");
}
}  // namespace

SchedulerPlugin::SchedulerPlugin(const plinth_create_args& args)
    : scheduler_(parse_config(args.config_json != nullptr ? args.config_json : ""), args.kv_cache,
                 host_of(args)) {
  const SchedulerConfig& c = scheduler_.config();
  host_of(args).info("max_num_seqs " + std::to_string(c.max_num_seqs) +
                     ", max_num_batched_tokens " + std::to_string(c.max_num_batched_tokens) +
                     ", chunked prefill " + (c.enable_chunked_prefill ? "on" : "off") +
                     ", policy " + (c.policy == Policy::kFcfs ? "fcfs" : "priority") +
                     ", watermark " + std::to_string(scheduler_.watermark_blocks()) + " blocks");
}

}  // namespace plinth::scheduler_continuous
