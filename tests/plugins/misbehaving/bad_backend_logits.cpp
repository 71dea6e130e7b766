// A backend that breaks the output rule (backend.h, plinth_forward_output: batch->num_logits rows
// of logits): it is test_backend (the logits of token t peak at (t + 1) % vocab), except that on
// a batch holding token `trigger_token` and wanting logits it returns one row too few
// (PLINTH_TEST_BAD_MODE "few_rows") or no logits at all (PLINTH_TEST_BAD_MODE "null_logits").
// Built twice (CMakeLists.txt: bad_backend_few_logits, bad_backend_null_logits). A whole batch's
// rows cannot be trusted: the engine must fail the sequences of that batch and go on serving.
#include <algorithm>
#include <string>

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
                      "description": "a batch holding this token id gets the broken output"}
  }})json";

class BadLogitsBackend : public plinth_test::TestBackend {
 public:
  explicit BadLogitsBackend(const plinth_create_args& a)
      : TestBackend(a),  // it reads only its own keys
        trigger_(plinth_test::config_of(a).at("trigger_token").get<int32_t>()) {}
  plinth_forward_output forward(const plinth_batch& b) {
    plinth_forward_output o = TestBackend::forward(b);
    if (b.num_logits == 0 || std::find(b.token_ids, b.token_ids + b.num_tokens, trigger_) ==
                                 b.token_ids + b.num_tokens) {
      return o;
    }
    if (std::string(PLINTH_TEST_BAD_MODE) == "few_rows") {
      o.num_logits -= 1;
    } else {
      o.logits = nullptr;
    }
    return o;
  }

 private:
  int32_t trigger_;
};

const plinth_backend_vtable kTable = plinth::sdk::backend_vtable<BadLogitsBackend>();

}  // namespace

PLINTH_PLUGIN(PLINTH_TEST_NAME, "0.1.0", PLINTH_KIND_BACKEND,
              "test_backend whose forward breaks the logits rule on a trigger token (host tests)",
              kSchema, &kTable)
