// plinth SDK — speculator adapter: builds a plinth_speculator_vtable from a C++ class.
//   struct MySpeculator {
//     explicit MySpeculator(const plinth_create_args&);
//     plinth_spec_proposal propose(std::span<const plinth_spec_seq> seqs, uint32_t max_draft);
//     // fills accepted[i] and next_token[i] for each item
//     void verify(std::span<const plinth_spec_verify> items, std::span<uint32_t> accepted,
//                 std::span<int32_t> next_token);
//     void release_seq(plinth_seq_id);
//     plinth_spec_stats stats();
//     // optional (ABI 1.2): a draft-length schedule, and proposals with per-sequence limits
//     uint32_t num_lookahead_slots(uint32_t num_running);
//     plinth_spec_proposal propose_batch(const plinth_spec_propose_args&);
//   };
#pragma once

#include <span>

#include <concepts>

#include "plinth/plugin.hpp"
#include "plinth/speculator.h"

namespace plinth::sdk {

namespace detail {
template <class T>
concept HasLookaheadSlots = requires(T& t, uint32_t n) {
  { t.num_lookahead_slots(n) } -> std::convertible_to<uint32_t>;
};
template <class T>
concept HasProposeBatch = requires(T& t, const plinth_spec_propose_args& a) {
  { t.propose_batch(a) } -> std::convertible_to<plinth_spec_proposal>;
};
}  // namespace detail

template <class T>
constexpr plinth_speculator_vtable speculator_vtable() {
  plinth_speculator_vtable v{};
  v.struct_size = sizeof(plinth_speculator_vtable);
  v.lifecycle = lifecycle<T>();
  v.propose = [](plinth_instance* i, const plinth_spec_seq* s, uint32_t n, uint32_t k,
                 plinth_spec_proposal* out, plinth_error* e) -> int32_t {
    return guard(
        e, [&] { write_out(out, self<T>(i).propose(std::span<const plinth_spec_seq>(s, n), k)); });
  };
  v.verify = [](plinth_instance* i, const plinth_spec_verify* items, uint32_t n, uint32_t* acc,
                int32_t* next, plinth_error* e) -> int32_t {
    return guard(e, [&] {
      self<T>(i).verify(std::span<const plinth_spec_verify>(items, n), std::span<uint32_t>(acc, n),
                        std::span<int32_t>(next, n));
    });
  };
  v.release_seq = [](plinth_instance* i, plinth_seq_id s) {
    try {
      self<T>(i).release_seq(s);
    } catch (...) {
    }
  };
  v.get_stats = [](plinth_instance* i, plinth_spec_stats* out, plinth_error* e) -> int32_t {
    return guard(e, [&] { write_out(out, self<T>(i).stats()); });
  };
  if constexpr (detail::HasLookaheadSlots<T>) {
    v.num_lookahead_slots = [](plinth_instance* i, uint32_t n) -> uint32_t {
      try {
        return self<T>(i).num_lookahead_slots(n);
      } catch (...) {
        return 0;  // no speculation this step rather than an exception across the ABI
      }
    };
  }
  if constexpr (detail::HasProposeBatch<T>) {
    v.propose_batch = [](plinth_instance* i, const plinth_spec_propose_args* a,
                         plinth_spec_proposal* out, plinth_error* e) -> int32_t {
      return guard(e, [&] { write_out(out, self<T>(i).propose_batch(*a)); });
    };
  }
  return v;
}

}  // namespace plinth::sdk
