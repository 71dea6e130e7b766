// spec_decode — the plugin library's one exported symbol: the speculator table over
// SpecDecodePlugin.
#include <plinth/speculator.hpp>

#include "spec_config.hpp"
#include "spec_decode_plugin.hpp"

namespace {
const plinth_speculator_vtable kTable =
    plinth::sdk::speculator_vtable<plinth::spec_decode::SpecDecodePlugin>();
}  // namespace

PLINTH_PLUGIN("spec_decode", "0.1.0", PLINTH_KIND_SPECULATOR,
              "speculative decoding: n-gram prompt lookup, a draft model or the target's early "
              "layers propose draft tokens; one target forward verifies them (greedy match or "
              "rejection sampling, lossless)",
              plinth::spec_decode::kConfigSchema, &kTable)
