#pragma once
// The manifest (docs/manifest.md): which model and which plugin libraries, with their configs,
// make up a pipeline. Parsing validates everything that can be known before a library is loaded:
// JSON syntax, duplicate and unknown keys, types, kinds, one of each kind (a backend: one target
// and at most one draft), the required kinds, the draft backend's `model` and speculator, and that
// every library resolves to a file. Each plugin's `config` is validated later, against the schema
// its library publishes (Pipeline::load), and a draft model's vocabulary when the pipeline loads it
// (runtime/draft_model.hpp).

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

/// What a backend instance runs: the target model (the top-level `model`, the one that is served)
/// or, for a speculator, a draft model of the same vocabulary (`"role": "draft"`).
enum class BackendRole { kTarget, kDraft };

/// One entry of `plugins`.
struct PluginEntry {
  size_t index = 0;                    // position in `plugins`
  std::string json_path;               // "plugins[<index>]"
  plinth_plugin_kind kind{};           // the `kind` the manifest declares
  std::string library;                 // as written: a short name or a path
  std::filesystem::path library_path;  // the resolved file
  std::string name;                    // `name`, or the library's short name when absent
                                       // (+ "_draft" for a draft backend)
  nlohmann::json config = nlohmann::json::object();  // as written ({} when absent)
  BackendRole role = BackendRole::kTarget;           // `role` of a backend ("target" default)
  /// A draft backend's `model`, resolved against the manifest's folder; nullopt for every other
  /// entry (a target backend runs the top-level `model`).
  std::optional<std::filesystem::path> model;

  bool is_draft_backend() const {
    return kind == PLINTH_KIND_BACKEND && role == BackendRole::kDraft;
  }
};

struct Manifest {
  std::filesystem::path file;                  // as given (for messages)
  std::filesystem::path dir;                   // its folder (absolute): base of relative paths
  std::optional<std::filesystem::path> model;  // resolved against dir; --model overrides
  std::vector<PluginEntry> plugins;            // in manifest order

  /// The entry of `kind`, or nullptr. For PLINTH_KIND_BACKEND the target backend (never the
  /// draft one).
  const PluginEntry* find(plinth_plugin_kind kind) const;
  /// The backend with `"role": "draft"`, or nullptr.
  const PluginEntry* draft_backend() const;
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
