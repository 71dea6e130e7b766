// plinth SDK — backend adapter: builds a plinth_backend_vtable from a C++ class.
//   struct MyBackend {
//     explicit MyBackend(const plinth_create_args&);
//     plinth_kv_layout kv_layout();
//     plinth_memory_info memory_info();
//     void allocate_kv(uint32_t num_blocks, uint32_t block_size);
//     plinth_forward_output forward(const plinth_batch& batch);
//     void copy_blocks(std::span<const plinth_block_copy> copies);
//   };
//   static const plinth_backend_vtable kTable = plinth::sdk::backend_vtable<MyBackend>();
#pragma once

#include <span>

#include "plinth/plugin.hpp"

namespace plinth::sdk {

template <class T>
constexpr plinth_backend_vtable backend_vtable() {
  plinth_backend_vtable v{};
  v.struct_size = sizeof(plinth_backend_vtable);
  v.lifecycle = lifecycle<T>();
  v.get_kv_layout = [](plinth_instance* i, plinth_kv_layout* out, plinth_error* e) -> int32_t {
    return guard(e, [&] { write_out(out, self<T>(i).kv_layout()); });
  };
  v.get_memory_info = [](plinth_instance* i, plinth_memory_info* out, plinth_error* e) -> int32_t {
    return guard(e, [&] { write_out(out, self<T>(i).memory_info()); });
  };
  v.allocate_kv = [](plinth_instance* i, uint32_t nb, uint32_t bs, plinth_error* e) -> int32_t {
    return guard(e, [&] { self<T>(i).allocate_kv(nb, bs); });
  };
  v.forward = [](plinth_instance* i, const plinth_batch* b, plinth_forward_output* out,
                 plinth_error* e) -> int32_t {
    return guard(e, [&] { write_out(out, self<T>(i).forward(*b)); });
  };
  v.copy_blocks = [](plinth_instance* i, const plinth_block_copy* c, uint32_t n,
                     plinth_error* e) -> int32_t {
    return guard(e, [&] { self<T>(i).copy_blocks(std::span<const plinth_block_copy>(c, n)); });
  };
  return v;
}

}  // namespace plinth::sdk
