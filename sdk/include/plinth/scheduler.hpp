// plinth SDK — scheduler adapter: builds a plinth_scheduler_vtable from a C++ class.
//   struct MyScheduler {
//     explicit MyScheduler(const plinth_create_args&);
//     void add(const plinth_sched_request&);  void abort_seq(plinth_seq_id);
//     plinth_sched_output schedule(const plinth_sched_step&);  // arrays owned by the object
//     void update(std::span<const plinth_sched_result>);  // see below
//     plinth_sched_stats stats();
//   };
#pragma once

#include <span>

#include "plinth/plugin.hpp"

namespace plinth::sdk {

template <class T>
constexpr plinth_scheduler_vtable scheduler_vtable() {
  plinth_scheduler_vtable v{};
  v.struct_size = sizeof(plinth_scheduler_vtable);
  v.lifecycle = lifecycle<T>();
  v.add = [](plinth_instance* i, const plinth_sched_request* r, plinth_error* e) -> int32_t {
    return guard(e, [&] { self<T>(i).add(*r); });
  };
  v.abort_seq = [](plinth_instance* i, plinth_seq_id s) {
    try {
      self<T>(i).abort_seq(s);
    } catch (...) {
    }
  };
  v.schedule = [](plinth_instance* i, const plinth_sched_step* s, plinth_sched_output* out,
                  plinth_error* e) -> int32_t {
    return guard(e, [&] { write_out(out, self<T>(i).schedule(*s)); });
  };
  // The host passes results at the stride of the minor this plugin declares (scheduler.h,
  // plinth_sched_result), which is sizeof(plinth_sched_result) of the headers it is built against,
  // so a span over them indexes correctly.
  v.update = [](plinth_instance* i, const plinth_sched_result* r, uint32_t n,
                plinth_error* e) -> int32_t {
    return guard(e, [&] { self<T>(i).update(std::span<const plinth_sched_result>(r, n)); });
  };
  v.get_stats = [](plinth_instance* i, plinth_sched_stats* out, plinth_error* e) -> int32_t {
    return guard(e, [&] { write_out(out, self<T>(i).stats()); });
  };
  return v;
}

}  // namespace plinth::sdk
