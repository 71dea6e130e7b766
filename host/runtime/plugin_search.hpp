#pragma once
// Where plugin libraries are found (docs/manifest.md, 'Where libraries are found'): a manifest's
// `library` is either a short name, resolved to libplinth_<name>.so in the folders below in order,
// or a path (it contains '/' or ends in ".so"), relative to the manifest's folder.
//   1. the manifest's folder
//   2. each folder of PLINTH_PLUGIN_PATH (colon-separated)
//   3. the build tree's plugin folder (<build>/plugins, fixed when the host is compiled)
//   4. the install prefix's lib/plinth/plugins

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace plinth {

/// "libplinth_<name>.so".
std::string plugin_file_name(std::string_view short_name);
/// True when `library` is written as a path rather than a short name.
bool library_is_path(std::string_view library);
/// True when `name` matches [a-z0-9_]+ (short names and descriptor names).
bool valid_plugin_name(std::string_view name);
/// The search folders in order; `manifest_dir` empty = left out. Folders need not exist.
std::vector<std::filesystem::path> plugin_search_path(const std::filesystem::path& manifest_dir);
/// The file `library` names, or nullopt when no folder holds it (paths: when the file is absent).
std::optional<std::filesystem::path> resolve_plugin(std::string_view library,
                                                    const std::filesystem::path& manifest_dir);
/// Every libplinth_*.so directly inside `dirs` (missing folders skipped), sorted per folder; a
/// name found in an earlier folder hides later ones.
std::vector<std::filesystem::path> find_plugin_files(
    const std::vector<std::filesystem::path>& dirs);

}  // namespace plinth
