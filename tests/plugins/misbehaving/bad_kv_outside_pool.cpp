// A kv_cache that breaks the block-table rule (kv_cache.h, get_block_table: physical block ids in
// [0, num_blocks), room for the tokens allocated): it is kv_paged, except that the block table of
// sequence `seq` is corrupted as `mode` says: "past_end" (its last block id becomes num_blocks),
// "negative" (-1) or "too_few" (its last block is left out). The engine must fail that sequence
// alone, give its blocks back, and go on serving the others.
#include <span>
#include <string>
#include <vector>

#include "kv_paged_plugin.hpp"
#include "plinth/kv_cache.hpp"
#include "plinth/plugin.hpp"
#include "wrapped_plugin.hpp"

namespace {

class OutsidePoolKv {
 public:
  explicit OutsidePoolKv(const plinth_create_args& a)
      : seq_(plinth_test::own_config(a).value("seq", uint64_t{1})),
        mode_(plinth_test::own_config(a).value("mode", std::string("past_end"))),
        inner_config_(plinth_test::inner_config(a)),
        inner_(plinth_test::with_config(a, inner_config_)) {}
  plinth_kv_info info() { return inner_.info(); }
  plinth_kv_stats stats() { return inner_.stats(); }
  uint32_t blocks_needed(plinth_seq_id s, uint32_t n) { return inner_.blocks_needed(s, n); }
  uint32_t allocate(plinth_seq_id s, uint32_t n, std::span<plinth_block_copy> copies) {
    return inner_.allocate(s, n, copies);
  }
  std::span<const int32_t> block_table(plinth_seq_id s) {
    std::span<const int32_t> real = inner_.block_table(s);
    if (s != seq_ || real.empty()) return real;
    bad_.assign(real.begin(), real.end());
    if (mode_ == "too_few") {
      bad_.pop_back();
    } else {
      bad_.back() = mode_ == "negative" ? -1 : static_cast<int32_t>(inner_.info().num_blocks);
    }
    return bad_;
  }
  void free_seq(plinth_seq_id s) { inner_.free_seq(s); }
  void truncate(plinth_seq_id s, uint32_t n) { inner_.truncate(s, n); }
  void fork(plinth_seq_id parent, plinth_seq_id child) { inner_.fork(parent, child); }
  void attach(plinth_seq_id s, std::span<const int32_t> blocks, uint32_t n) {
    inner_.attach(s, blocks, n);
  }
  void ref_blocks(std::span<const int32_t> blocks) { inner_.ref_blocks(blocks); }
  void unref_blocks(std::span<const int32_t> blocks) { inner_.unref_blocks(blocks); }

 private:
  plinth_seq_id seq_;
  std::string mode_;
  std::string inner_config_;
  plinth::kv_paged::KvPagedPlugin inner_;
  std::vector<int32_t> bad_;
};

const char* const kSchema = R"json({"type": "object", "additionalProperties": false,
  "properties": {
    "seq": {"type": "integer", "minimum": 1, "default": 1,
            "description": "the sequence whose block table is corrupted"},
    "mode": {"type": "string", "enum": ["past_end", "negative", "too_few"], "default": "past_end",
             "description": "past_end: last block id = num_blocks; negative: -1; too_few: last block left out"},
    "inner": {"type": "object", "default": {}, "description": "config of the wrapped kv_paged"}}})json";
const plinth_kv_cache_vtable kTable = plinth::sdk::kv_cache_vtable<OutsidePoolKv>();

}  // namespace

PLINTH_PLUGIN("bad_kv_outside_pool", "0.1.0", PLINTH_KIND_KV_CACHE,
              "kv_paged whose block table of one sequence points outside the pool (host tests)",
              kSchema, &kTable)
