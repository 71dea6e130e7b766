#pragma once
// Where plugin libraries are found (docs/manifest.md, 'Where libraries are found'): a manifest's
// `library` is either a short name, resolved to libplinth_<name>.so in the folders below in order,
// or a path (it contains '/' or ends in ".so"), relative to the manifest's folder.
//   1. the manifest's folder
//   2. each folder of PLINTH_PLUGIN_PATH (colon-separated)
//   3. the build tree's plugin folder: <build>/plugins, where <build> is the nearest folder holding
//      CMakeCache.txt from the host binary's folder up (left out when there is none)
//   4. the installed layout, relative to the host binary: <prefix>/lib/plinth/plugins for
//      <prefix>/bin/plinth, or for <prefix>/lib/libplinth.so (a program embedding plinth)
// The host binary is the shared library holding this code when it is one, else /proc/self/exe,
// so an installed prefix works wherever it is moved; no build or install path is compiled in.

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
/// The file holding the running host code: libplinth.so's path when it is loaded from that shared
/// library, else the executable (/proc/self/exe); empty when neither can be read.
std::filesystem::path host_binary();
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
