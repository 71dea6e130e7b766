// test_spec_probe: a speculator that proposes nothing and records its create arguments
// (spec_probe.h), so that the host's tests can check what the pipeline wired into it.
#include <cstring>
#include <span>
#include <string>
#include <vector>

#include "plinth/plugin.hpp"
#include "plinth/speculator.hpp"
#include "spec_probe.h"

namespace {

class SpecProbe {
 public:
  explicit SpecProbe(const plinth_create_args& a) : host_(a.host, a.instance_name) {
    rec_.struct_size = sizeof(rec_);
    rec_.args_struct_size = a.struct_size;
    rec_.model = a.model;
    rec_.backend = a.backend;
    rec_.kv_cache = a.kv_cache;
    if (PLINTH_HAS_FIELD(&a, plinth_create_args, draft_model)) {
      rec_.draft_backend = a.draft_backend;
      rec_.draft_model = a.draft_model;
    }
    rec_.draft_layout_status = PLINTH_ERR_INVALID_ARGUMENT;
    if (rec_.draft_backend.vtable != nullptr) {
      rec_.draft_layout.struct_size = sizeof(rec_.draft_layout);
      plinth_error e{};
      rec_.draft_layout_status = rec_.draft_backend.vtable->get_kv_layout(
          rec_.draft_backend.instance, &rec_.draft_layout, &e);
    }
    host_.info("create speculator");
  }
  ~SpecProbe() { host_.info("destroy speculator"); }

  plinth_spec_proposal propose(std::span<const plinth_spec_seq> seqs, uint32_t) {
    zeros_.assign(seqs.size(), 0);
    plinth_spec_proposal p{};
    p.num_seqs = static_cast<uint32_t>(seqs.size());
    p.num_draft = zeros_.data();
    return p;
  }
  void verify(std::span<const plinth_spec_verify> items, std::span<uint32_t> accepted,
              std::span<int32_t> next_token) {
    for (size_t i = 0; i < items.size(); ++i) {
      accepted[i] = 0;
      next_token[i] = items[i].target_tokens[0];
    }
  }
  void release_seq(plinth_seq_id) {}
  plinth_spec_stats stats() { return plinth_spec_stats{}; }
  const void* extension(const char* name) {
    return std::strcmp(name, PLINTH_TEST_EXT_SPEC_PROBE) == 0 ? &rec_ : nullptr;
  }

 private:
  plinth::sdk::Host host_;
  plinth_test_spec_probe rec_{};
  std::vector<uint32_t> zeros_;
};

}  // namespace

static const plinth_speculator_vtable kTable = plinth::sdk::speculator_vtable<SpecProbe>();
PLINTH_PLUGIN("test_spec_probe", "0.1.0", PLINTH_KIND_SPECULATOR,
              "speculator for host tests: records its create arguments", nullptr, &kTable)
