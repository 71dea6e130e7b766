#include "runtime/kinds.hpp"

namespace plinth {

namespace {
struct KindInfo {
  plinth_plugin_kind kind;
  std::string_view name;
  bool required;
  std::string_view step;
};
constexpr std::array<KindInfo, 7> kKinds = {{
    {PLINTH_KIND_BACKEND, "backend", true, "5. backend.forward (runs the model over the batch)"},
    {PLINTH_KIND_KV_CACHE, "kv_cache", true,
     "3. kv_cache.allocate (KV slots for the scheduled tokens)"},
    {PLINTH_KIND_SCHEDULER, "scheduler", true,
     "1. scheduler.schedule (which sequences run, how many tokens)"},
    {PLINTH_KIND_PREFIX_CACHE, "prefix_cache", false,
     "2. prefix_cache.match at admission, insert as blocks fill (called by the scheduler)"},
    {PLINTH_KIND_SPECULATOR, "speculator", false,
     "4. speculator.propose (draft tokens), 6. verify"},
    {PLINTH_KIND_GRAPH_RUNNER, "graph_runner", false,
     "5. graph_runner.run (replays captured decode steps)"},
    {PLINTH_KIND_GRAMMAR, "grammar", false,
     "5b. grammar.fill_bitmask (masks constrained sequences' logits), accept / rollback"},
}};

const KindInfo* find(int32_t kind) {
  for (const KindInfo& k : kKinds) {
    if (k.kind == kind) return &k;
  }
  return nullptr;
}
}  // namespace

std::string_view kind_name(int32_t kind) {
  const KindInfo* k = find(kind);
  return k != nullptr ? k->name : std::string_view("unknown");
}

std::optional<plinth_plugin_kind> kind_from_name(std::string_view name) {
  for (const KindInfo& k : kKinds) {
    if (k.name == name) return k.kind;
  }
  return std::nullopt;
}

bool is_valid_kind(int32_t kind) {
  return find(kind) != nullptr;
}

bool kind_is_required(plinth_plugin_kind kind) {
  const KindInfo* k = find(kind);
  return k != nullptr && k->required;
}

std::string_view kind_step(plinth_plugin_kind kind) {
  const KindInfo* k = find(kind);
  return k != nullptr ? k->step : std::string_view();
}

}  // namespace plinth
