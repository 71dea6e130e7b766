#pragma once
// The manifest (docs/manifest.md): which model and which plugin libraries, with their configs,
// make up a pipeline. Parsing validates everything that can be known before a library is loaded:
// JSON syntax, duplicate and unknown keys, types, kinds, one of each kind, the required kinds, and
// that every library resolves to a file. Each plugin's `config` is validated later, against the
// schema its library publishes (runtime/plugin_set.hpp).

#include <cstddef>
#include <filesystem>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "plinth/abi.h"

namespace plinth {

/// A mistake in a manifest. what() is "<file>: <json_path>: <message>" (the CLI prints it after
/// "error: " and exits with code 2).
class ManifestError : public std::runtime_error {
 public:
  ManifestError(std::filesystem::path file, std::string json_path, std::string message);
  const std::filesystem::path& file() const { return file_; }
  /// e.g. "plugins[2].config.block_size"; "$" for the document itself; for a syntax error the
  /// position, "line 3, column 5".
  const std::string& json_path() const { return json_path_; }
  const std::string& message() const { return message_; }

 private:
  std::filesystem::path file_;
  std::string json_path_;
  std::string message_;
};

/// One entry of `plugins`.
struct PluginEntry {
  size_t index = 0;                    // position in `plugins`
  std::string json_path;               // "plugins[<index>]"
  plinth_plugin_kind kind{};           // the `kind` the manifest declares
  std::string library;                 // as written: a short name or a path
  std::filesystem::path library_path;  // the resolved file
  std::string name;                    // `name`, or the library's short name when absent
  nlohmann::json config = nlohmann::json::object();  // as written ({} when absent)
};

struct Manifest {
  std::filesystem::path file;                  // as given (for messages)
  std::filesystem::path dir;                   // its folder (absolute): base of relative paths
  std::optional<std::filesystem::path> model;  // resolved against dir; --model overrides
  std::vector<PluginEntry> plugins;            // in manifest order

  /// The entry of `kind`, or nullptr.
  const PluginEntry* find(plinth_plugin_kind kind) const;
};

struct ManifestOptions {
  /// Replaces the manifest's `model` (resolved against the working directory).
  std::optional<std::filesystem::path> model_override;
};

/// Reads and validates `file`. Throws ManifestError.
Manifest load_manifest(const std::filesystem::path& file, const ManifestOptions& options = {});
/// Validates manifest text as if read from `file` (whose folder resolves relative paths).
Manifest parse_manifest(std::string_view text, const std::filesystem::path& file,
                        const ManifestOptions& options = {});

}  // namespace plinth
