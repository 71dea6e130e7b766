#pragma once
// One loaded plugin library (docs/architecture.md, 'Loading'): open with RTLD_LOCAL through
// Boost.DLL, find the entry symbol, check the ABI version and the descriptor, parse the config
// schema. Every refusal is a PluginError naming the library file and what to do.

#include <cstdint>
#include <filesystem>
#include <memory>
#include <stdexcept>
#include <string>
#include <utility>

#include <boost/dll/shared_library.hpp>
#include <nlohmann/json.hpp>

#include "plinth/plinth.h"

namespace plinth {

/// A plugin library that cannot be loaded or used, or an instance that failed to create.
class PluginError : public std::runtime_error {
 public:
  PluginError(std::filesystem::path library, const std::string& message)
      : std::runtime_error(message), library_(std::move(library)) {}
  const std::filesystem::path& library() const { return library_; }

 private:
  std::filesystem::path library_;
};

/// A plugin refused its manifest config at create (INVALID_ARGUMENT): a config error like a
/// schema violation, so the CLI exits with code 2 for it.
class PluginConfigError : public PluginError {
 public:
  using PluginError::PluginError;
};

/// ABI rule (abi.h): same major, plugin minor <= host minor.
constexpr bool abi_compatible(uint32_t host_major, uint32_t host_minor, uint32_t plugin_major,
                              uint32_t plugin_minor) {
  return plugin_major == host_major && plugin_minor <= host_minor;
}

class PluginLibrary {
 public:
  /// Loads `file` and checks it; throws PluginError: cannot be opened, no plinth_plugin_entry, the
  /// entry returns NULL, an incompatible ABI version, a malformed descriptor (name, kind, table
  /// size, required functions missing) or config schema.
  static std::shared_ptr<PluginLibrary> open(const std::filesystem::path& file);
  PluginLibrary(const PluginLibrary&) = delete;
  PluginLibrary& operator=(const PluginLibrary&) = delete;

  const std::filesystem::path& file() const { return file_; }
  /// Static data inside the library: valid while this object lives.
  const plinth_plugin_descriptor& descriptor() const { return *desc_; }
  std::string name() const { return desc_->name; }
  plinth_plugin_kind kind() const { return static_cast<plinth_plugin_kind>(desc_->kind); }
  /// The lifecycle every kind's table starts with.
  const plinth_vtable_head& head() const {
    return *static_cast<const plinth_vtable_head*>(desc_->vtable);
  }
  /// The published config schema ({"type":"object","additionalProperties":false} when NULL).
  const nlohmann::json& schema() const { return schema_; }
  /// "kv_paged 0.1.0 (kv_cache, ABI 1.0, /path/libplinth_kv_paged.so)" for log lines.
  std::string describe() const;

 private:
  explicit PluginLibrary(std::filesystem::path file) : file_(std::move(file)) {}
  std::filesystem::path file_;
  boost::dll::shared_library lib_;
  const plinth_plugin_descriptor* desc_ = nullptr;
  nlohmann::json schema_;
};

}  // namespace plinth
