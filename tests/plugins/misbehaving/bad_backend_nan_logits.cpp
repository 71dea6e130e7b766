// A backend whose model produces a non-finite value for one sequence: it is test_backend (the
// logits of token t peak at (t + 1) % vocab), except that the logits row of a position holding
// token `trigger_token` (at position `position`, or any position when it is -1) gets NaN
// (`value` "nan") or +inf ("inf") in entry 0. With `argmax_ids` it also fills
// plinth_forward_output.argmax_ids (ABI 1.3), -1 for that row. This breaks no ABI rule: a
// non-finite row is the model's fault, and the host must fail that request alone (its KV freed)
// while the others in the batch go on (docs/architecture.md, "One engine step").
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "test_plugins.hpp"

namespace {

const char* const kSchema = R"json({
  "type": "object", "additionalProperties": false,
  "properties": {
    "memory_mib": {"type": "integer", "minimum": 1, "maximum": 1048576, "default": 256,
                   "description": "memory the fake device offers for the KV cache, MiB"},
    "cuda_extension": {"type": "boolean", "default": false,
                       "description": "offer plinth.cuda_stream/1 (all its calls fail)"},
    "trigger_token": {"type": "integer", "minimum": 0, "default": 63,
                      "description": "the logits row of a position holding this token is bad"},
    "position": {"type": "integer", "minimum": -1, "default": -1,
                 "description": "only at this position of its sequence (-1: any position)"},
    "value": {"type": "string", "enum": ["nan", "inf"], "default": "nan",
              "description": "what entry 0 of the bad row holds"},
    "argmax_ids": {"type": "boolean", "default": false,
                   "description": "also return argmax_ids (-1 for the bad row)"}
  }})json";

class NanLogitsBackend : public plinth_test::TestBackend {
 public:
  explicit NanLogitsBackend(const plinth_create_args& a) : TestBackend(a) {
    const nlohmann::json c = plinth_test::config_of(a);
    trigger_ = c.at("trigger_token").get<int32_t>();
    position_ = c.at("position").get<int32_t>();
    value_ = c.at("value").get<std::string>() == "nan" ? std::numeric_limits<float>::quiet_NaN()
                                                       : std::numeric_limits<float>::infinity();
    argmax_ = c.at("argmax_ids").get<bool>();
  }
  plinth_forward_output forward(const plinth_batch& b) {
    plinth_forward_output o = TestBackend::forward(b);
    auto* logits = const_cast<float*>(o.logits);  // TestBackend's own buffer
    ids_.assign(b.num_logits, 0);
    for (uint32_t r = 0; r < b.num_logits; ++r) {
      const int32_t i = b.logits_indices[r];
      const int32_t t = b.token_ids[i];
      ids_[r] = static_cast<int32_t>((static_cast<uint32_t>(t) + 1) % o.vocab_size);
      if (t == trigger_ && (position_ < 0 || b.positions[i] == position_)) {
        logits[static_cast<size_t>(r) * o.vocab_size] = value_;
        ids_[r] = -1;
      }
    }
    if (argmax_) o.argmax_ids = ids_.data();
    return o;
  }

 private:
  int32_t trigger_ = 63, position_ = -1;
  float value_ = 0;
  bool argmax_ = false;
  std::vector<int32_t> ids_;
};

const plinth_backend_vtable kTable = plinth::sdk::backend_vtable<NanLogitsBackend>();

}  // namespace

PLINTH_PLUGIN("bad_backend_nan_logits", "0.1.0", PLINTH_KIND_BACKEND,
              "test_backend whose logits row of one token is NaN or +inf (host tests)", kSchema,
              &kTable)
