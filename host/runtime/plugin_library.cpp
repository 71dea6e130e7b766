#include "runtime/plugin_library.hpp"

#include "runtime/json_schema.hpp"
#include "runtime/kinds.hpp"
#include "runtime/plugin_search.hpp"

namespace plinth {

namespace fs = std::filesystem;

namespace {

std::string version_text(uint32_t major, uint32_t minor) {
  return std::to_string(major) + "." + std::to_string(minor);
}

// The frozen size of each kind's table in the ABI minor a plugin declares (abi_versions.h): a
// table must be at least that large; entries past its struct_size are read as absent.
size_t table_size(plinth_plugin_kind kind, uint32_t minor) {
#define PLINTH_TABLE_SIZE(NAME)                         \
  (minor == 0   ? PLINTH_ABI_1_0_SIZEOF_##NAME##_VTABLE \
   : minor == 1 ? PLINTH_ABI_1_1_SIZEOF_##NAME##_VTABLE \
   : minor == 2 ? PLINTH_ABI_1_2_SIZEOF_##NAME##_VTABLE \
   : minor == 3 ? PLINTH_ABI_1_3_SIZEOF_##NAME##_VTABLE \
                : PLINTH_ABI_1_4_SIZEOF_##NAME##_VTABLE)
  // NOLINTBEGIN(bugprone-branch-clone): a table that did not grow in a minor has equal sizes
  switch (kind) {
    case PLINTH_KIND_BACKEND:
      return PLINTH_TABLE_SIZE(BACKEND);
    case PLINTH_KIND_KV_CACHE:
      return PLINTH_TABLE_SIZE(KV_CACHE);
    case PLINTH_KIND_SCHEDULER:
      return PLINTH_TABLE_SIZE(SCHEDULER);
    case PLINTH_KIND_PREFIX_CACHE:
      return PLINTH_TABLE_SIZE(PREFIX_CACHE);
    case PLINTH_KIND_SPECULATOR:
      return PLINTH_TABLE_SIZE(SPECULATOR);
    case PLINTH_KIND_GRAPH_RUNNER:
      return PLINTH_TABLE_SIZE(GRAPH_RUNNER);
    case PLINTH_KIND_GRAMMAR:
      return PLINTH_ABI_1_4_SIZEOF_GRAMMAR_VTABLE;  // new in 1.4
  }
    // NOLINTEND(bugprone-branch-clone)
#undef PLINTH_TABLE_SIZE
  return 0;
}

// The first required function pointer that is NULL, or nullptr when all are set.
const char* missing_function(plinth_plugin_kind kind, const void* table) {
#define PLINTH_REQUIRE(type, field) \
  if (static_cast<const type*>(table)->field == nullptr) return #field
  switch (kind) {
    case PLINTH_KIND_BACKEND:
      PLINTH_REQUIRE(plinth_backend_vtable, get_kv_layout);
      PLINTH_REQUIRE(plinth_backend_vtable, get_memory_info);
      PLINTH_REQUIRE(plinth_backend_vtable, allocate_kv);
      PLINTH_REQUIRE(plinth_backend_vtable, forward);
      PLINTH_REQUIRE(plinth_backend_vtable, copy_blocks);
      break;
    case PLINTH_KIND_KV_CACHE:
      PLINTH_REQUIRE(plinth_kv_cache_vtable, get_info);
      PLINTH_REQUIRE(plinth_kv_cache_vtable, get_stats);
      PLINTH_REQUIRE(plinth_kv_cache_vtable, blocks_needed);
      PLINTH_REQUIRE(plinth_kv_cache_vtable, allocate);
      PLINTH_REQUIRE(plinth_kv_cache_vtable, get_block_table);
      PLINTH_REQUIRE(plinth_kv_cache_vtable, free_seq);
      PLINTH_REQUIRE(plinth_kv_cache_vtable, truncate);
      PLINTH_REQUIRE(plinth_kv_cache_vtable, fork);
      PLINTH_REQUIRE(plinth_kv_cache_vtable, attach);
      PLINTH_REQUIRE(plinth_kv_cache_vtable, ref_blocks);
      PLINTH_REQUIRE(plinth_kv_cache_vtable, unref_blocks);
      break;
    case PLINTH_KIND_SCHEDULER:
      PLINTH_REQUIRE(plinth_scheduler_vtable, add);
      PLINTH_REQUIRE(plinth_scheduler_vtable, abort_seq);
      PLINTH_REQUIRE(plinth_scheduler_vtable, schedule);
      PLINTH_REQUIRE(plinth_scheduler_vtable, update);
      PLINTH_REQUIRE(plinth_scheduler_vtable, get_stats);
      break;
    case PLINTH_KIND_GRAPH_RUNNER:
      PLINTH_REQUIRE(plinth_graph_runner_vtable, capture);
      PLINTH_REQUIRE(plinth_graph_runner_vtable, can_run);
      PLINTH_REQUIRE(plinth_graph_runner_vtable, run);
      break;
    case PLINTH_KIND_GRAMMAR:
      PLINTH_REQUIRE(plinth_grammar_vtable, compile);
      PLINTH_REQUIRE(plinth_grammar_vtable, release_grammar);
      PLINTH_REQUIRE(plinth_grammar_vtable, matcher_create);
      PLINTH_REQUIRE(plinth_grammar_vtable, matcher_destroy);
      PLINTH_REQUIRE(plinth_grammar_vtable, fill_bitmask);
      PLINTH_REQUIRE(plinth_grammar_vtable, accept);
      PLINTH_REQUIRE(plinth_grammar_vtable, rollback);
      PLINTH_REQUIRE(plinth_grammar_vtable, can_end);
      PLINTH_REQUIRE(plinth_grammar_vtable, is_terminated);
      PLINTH_REQUIRE(plinth_grammar_vtable, get_stats);
      break;
    case PLINTH_KIND_PREFIX_CACHE:
    case PLINTH_KIND_SPECULATOR:
      break;  // their tables' entries are checked by the engine that calls them
  }
#undef PLINTH_REQUIRE
  return nullptr;
}

}  // namespace

std::shared_ptr<PluginLibrary> PluginLibrary::open(const fs::path& file) {
  std::shared_ptr<PluginLibrary> lib(new PluginLibrary(file));
  const std::string where = "plugin library " + file.string();
  const std::string rebuild = "rebuild it against this host's SDK (plinth ABI " +
                              version_text(PLINTH_ABI_MAJOR, PLINTH_ABI_MINOR) + ")";
  boost::system::error_code ec;
  lib->lib_.load(boost::dll::fs::path(file.string()),
                 boost::dll::load_mode::rtld_now | boost::dll::load_mode::rtld_local, ec);
  if (ec) {
    throw PluginError(file, where + " cannot be loaded (" + ec.message() +
                                "): check that it is a shared library built for this machine and "
                                "that the libraries it needs are installed (ldd shows which)");
  }
  if (!lib->lib_.has(PLINTH_PLUGIN_ENTRY_SYMBOL)) {
    throw PluginError(file, where + " has no symbol " PLINTH_PLUGIN_ENTRY_SYMBOL
                                    ": it is not a plinth plugin; define the entry with "
                                    "PLINTH_PLUGIN(...) from <plinth/plugin.hpp> (exported with "
                                    "PLINTH_EXPORT), or fix the manifest's `library`");
  }
  auto entry = lib->lib_.get<const plinth_plugin_descriptor*()>(PLINTH_PLUGIN_ENTRY_SYMBOL);
  const plinth_plugin_descriptor* d = nullptr;
  try {
    d = entry();
  } catch (...) {
    throw PluginError(file, where + ": " PLINTH_PLUGIN_ENTRY_SYMBOL
                                    " threw an exception; it must only return static data: fix "
                                    "the plugin");
  }
  if (d == nullptr) {
    throw PluginError(file, where + ": " PLINTH_PLUGIN_ENTRY_SYMBOL
                                    " returned NULL; it must return a static descriptor: fix the "
                                    "plugin");
  }
  // The first fields are frozen: struct_size, abi_major, abi_minor.
  if (!abi_compatible(PLINTH_ABI_MAJOR, PLINTH_ABI_MINOR, d->abi_major, d->abi_minor)) {
    std::string plugin_abi = version_text(d->abi_major, d->abi_minor);
    std::string host_abi = version_text(PLINTH_ABI_MAJOR, PLINTH_ABI_MINOR);
    std::string fix =
        d->abi_major != PLINTH_ABI_MAJOR
            ? "another ABI major version is incompatible; " + rebuild
            : "its minor version is newer than the host's; upgrade plinth or " + rebuild;
    throw PluginError(file, where + " was built against plinth ABI " + plugin_abi +
                                ", but this host speaks ABI " + host_abi + ": " + fix);
  }
  if (d->struct_size < PLINTH_ABI_1_0_SIZEOF_PLUGIN_DESCRIPTOR) {
    throw PluginError(file, where + ": descriptor struct_size " + std::to_string(d->struct_size) +
                                " is smaller than ABI 1.0's " +
                                std::to_string(PLINTH_ABI_1_0_SIZEOF_PLUGIN_DESCRIPTOR) + "; " +
                                rebuild);
  }
  if (d->name == nullptr || !valid_plugin_name(d->name) || d->version == nullptr) {
    throw PluginError(file, where +
                                ": the descriptor needs a name matching [a-z0-9_]+ and a "
                                "version string: fix PLINTH_PLUGIN(...) in the plugin");
  }
  if (!is_valid_kind(d->kind)) {
    throw PluginError(file, where + " (" + d->name + ") declares unknown kind " +
                                std::to_string(d->kind) + "; " + rebuild);
  }
  auto kind = static_cast<plinth_plugin_kind>(d->kind);
  const auto* head = static_cast<const plinth_vtable_head*>(d->vtable);
  if (head != nullptr && head->struct_size < table_size(kind, d->abi_minor)) {
    throw PluginError(file, where + " (" + d->name + "): its " + std::string(kind_name(kind)) +
                                " table has struct_size " + std::to_string(head->struct_size) +
                                ", but ABI " + version_text(d->abi_major, d->abi_minor) +
                                " (as the plugin declares) needs at least " +
                                std::to_string(table_size(kind, d->abi_minor)) +
                                " bytes; build it with plinth::sdk::" +
                                std::string(kind_name(kind)) + "_vtable<T>() and " + rebuild);
  }
  if (head == nullptr || head->lifecycle.create == nullptr || head->lifecycle.destroy == nullptr) {
    throw PluginError(file, where + " (" + d->name + "): its " + std::string(kind_name(kind)) +
                                " table is missing, too small, or lacks lifecycle.create/destroy; "
                                "build it with plinth::sdk::" +
                                std::string(kind_name(kind)) + "_vtable<T>() and " + rebuild);
  }
  if (const char* fn = missing_function(kind, d->vtable); fn != nullptr) {
    throw PluginError(file, where + " (" + d->name + "): required function " + fn + " of its " +
                                std::string(kind_name(kind)) + " table is NULL: implement it");
  }
  lib->desc_ = d;
  try {
    lib->schema_ = d->config_schema == nullptr
                       ? nlohmann::json{{"type", "object"}, {"additionalProperties", false}}
                       : nlohmann::json::parse(d->config_schema);
    check_schema(lib->schema_, "config_schema");
  } catch (const std::exception& e) {
    throw PluginError(file, where + " (" + d->name + ") publishes an unusable config schema: " +
                                e.what() + ": fix the plugin's schema");
  }
  return lib;
}

std::string PluginLibrary::describe() const {
  return std::string(desc_->name) + " " + desc_->version + " (" +
         std::string(kind_name(desc_->kind)) + ", ABI " +
         version_text(desc_->abi_major, desc_->abi_minor) + ", " + file_.string() + ")";
}

}  // namespace plinth
