// Manifest parser: arbitrary text as a manifest file in manifests/ (relative library and model
// paths resolve there). Every rejection must be a ManifestError.
#include <string_view>

#include "fuzz_support.hpp"
#include "fuzz_targets.hpp"
#include "runtime/manifest.hpp"

namespace plinth::fuzz {

void fuzz_manifest(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
#ifdef PLINTH_SOURCE_DIR
  const char* file = PLINTH_SOURCE_DIR "/manifests/fuzz.json";
#else
  const char* file = "manifests/fuzz.json";
#endif
  try {
    const Manifest m = parse_manifest(text, file);
    for (const PluginEntry& e : m.plugins) {
      crash_if(e.library_path.empty(), "an accepted entry without a resolved library");
      crash_if(e.model.has_value() != e.is_draft_backend(), "a model on a non-draft entry");
    }
  } catch (const ManifestError&) {
  }
}

}  // namespace plinth::fuzz

PLINTH_FUZZ_ENTRY(plinth::fuzz::fuzz_manifest)
