#include "scheduler_plugin.hpp"

#include <string>

namespace plinth::scheduler_continuous {

namespace {
sdk::Host host_of(const plinth_create_args& args) {
  return sdk::Host(args.host,
                   args.instance_name != nullptr ? args.instance_name : "scheduler_continuous");
}
const char* policy_name(Policy p) {
  switch (p) {
    case Policy::kFcfs:
      return "fcfs";
    case Policy::kPriority:
      return "priority";
    case Policy::kLongestPrefixFirst:
      return "longest_prefix_first";
  }
  return "?";
}
}  // namespace

SchedulerPlugin::SchedulerPlugin(const plinth_create_args& args)
    : scheduler_(parse_config(args.config_json != nullptr ? args.config_json : ""), args.kv_cache,
                 host_of(args), PrefixClient(args.prefix_cache, args.host)) {
  const SchedulerConfig& c = scheduler_.config();
  host_of(args).info("max_num_seqs " + std::to_string(c.max_num_seqs) +
                     ", max_num_batched_tokens " + std::to_string(c.max_num_batched_tokens) +
                     ", chunked prefill " + (c.enable_chunked_prefill ? "on" : "off") +
                     ", policy " + policy_name(c.policy) + ", prefix caching " +
                     (scheduler_.prefix_caching() ? "on" : "off") + ", watermark " +
                     std::to_string(scheduler_.watermark_blocks()) + " blocks");
}

}  // namespace plinth::scheduler_continuous
