// plinth SDK — graph_runner adapter: builds a plinth_graph_runner_vtable from a C++ class.
//   struct MyRunner {
//     explicit MyRunner(const plinth_create_args&);   // throw Error(UNSUPPORTED) without CUDA ext
//     void capture();
//     bool can_run(const plinth_batch&);
//     plinth_forward_output run(const plinth_batch&);
//   };
#pragma once

#include "plinth/plugin.hpp"

namespace plinth::sdk {

template <class T>
constexpr plinth_graph_runner_vtable graph_runner_vtable() {
  plinth_graph_runner_vtable v{};
  v.struct_size = sizeof(plinth_graph_runner_vtable);
  v.lifecycle = lifecycle<T>();
  v.capture = [](plinth_instance* i, plinth_error* e) -> int32_t {
    return guard(e, [&] { self<T>(i).capture(); });
  };
  v.can_run = [](plinth_instance* i, const plinth_batch* b) -> int32_t {
    try {
      return self<T>(i).can_run(*b) ? 1 : 0;
    } catch (...) {
      return 0;
    }
  };
  v.run = [](plinth_instance* i, const plinth_batch* b, plinth_forward_output* out,
             plinth_error* e) -> int32_t {
    return guard(e, [&] { write_out(out, self<T>(i).run(*b)); });
  };
  return v;
}

}  // namespace plinth::sdk
