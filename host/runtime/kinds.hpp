#pragma once
// Plugin kinds as the manifest spells them, and their rules (docs/manifest.md, 'Kinds'): how many
// of each a pipeline may hold, and the order in which instances are created (and destroyed in
// reverse).

#include <array>
#include <optional>
#include <string_view>

#include "plinth/abi.h"

namespace plinth {

/// Creation order of the ABI (sdk/include/plinth/plugin.h): each kind may use those before it.
/// A draft backend (`"role": "draft"`) is created right after the target backend, before the
/// kv_cache, and destroyed right before the target backend (Pipeline::instantiate).
inline constexpr std::array<plinth_plugin_kind, 7> kCreationOrder = {
    PLINTH_KIND_BACKEND,   PLINTH_KIND_KV_CACHE,   PLINTH_KIND_PREFIX_CACHE,
    PLINTH_KIND_SCHEDULER, PLINTH_KIND_SPECULATOR, PLINTH_KIND_GRAPH_RUNNER,
    PLINTH_KIND_GRAMMAR};

/// "backend", "kv_cache", ...; "unknown" for a value outside plinth_plugin_kind.
std::string_view kind_name(int32_t kind);
/// The kind named `name`, or nullopt.
std::optional<plinth_plugin_kind> kind_from_name(std::string_view name);
/// True for a valid plinth_plugin_kind value.
bool is_valid_kind(int32_t kind);
/// Kinds a pipeline must have exactly one of: backend, kv_cache, scheduler.
bool kind_is_required(plinth_plugin_kind kind);
/// Kinds a manifest holds at most one of: all but the backend, of which there may be one target
/// and one draft (`"role": "draft"`, the speculator's draft model).
inline constexpr bool kind_is_single_instance(plinth_plugin_kind kind) {
  return kind != PLINTH_KIND_BACKEND;
}
/// The step where the kind acts (docs/architecture.md, 'One engine step'; numbered as in
/// docs/manifest.md, 'Kinds'), for `manifest check` ("3. kv_cache.allocate").
std::string_view kind_step(plinth_plugin_kind kind);
/// The kinds in the order of one engine step (docs/architecture.md, 'One engine step').
inline constexpr std::array<plinth_plugin_kind, 7> kStepOrder = {
    PLINTH_KIND_SCHEDULER,  PLINTH_KIND_PREFIX_CACHE, PLINTH_KIND_KV_CACHE,
    PLINTH_KIND_SPECULATOR, PLINTH_KIND_GRAPH_RUNNER, PLINTH_KIND_BACKEND,
    PLINTH_KIND_GRAMMAR};

}  // namespace plinth
