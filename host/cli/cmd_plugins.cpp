// plinth plugins list [--path DIR]...: every plugin library found, loaded and checked.
#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

#include "cli/commands.hpp"
#include "runtime/kinds.hpp"
#include "runtime/plugin_library.hpp"
#include "runtime/plugin_search.hpp"

namespace plinth::cli {

namespace {

struct ListOptions {
  std::vector<std::string> paths;
};

void list_plugins(const ListOptions& o) {
  std::vector<std::filesystem::path> dirs;
  if (o.paths.empty()) {
    dirs = plugin_search_path({});
  } else {
    dirs.assign(o.paths.begin(), o.paths.end());
  }
  std::vector<std::array<std::string, 5>> rows = {{"NAME", "KIND", "VERSION", "ABI", "FILE"}};
  int refused = 0;
  for (const std::filesystem::path& file : find_plugin_files(dirs)) {
    try {
      auto lib = PluginLibrary::open(file);
      const plinth_plugin_descriptor& d = lib->descriptor();
      rows.push_back({d.name, std::string(kind_name(d.kind)), d.version,
                      std::to_string(d.abi_major) + "." + std::to_string(d.abi_minor),
                      file.string()});
    } catch (const PluginError& e) {
      std::fprintf(stderr, "warning: skipped: %s\n", e.what());
      ++refused;
    }
  }
  std::array<size_t, 5> width{};
  for (const auto& r : rows) {
    for (size_t i = 0; i < r.size(); ++i) width[i] = std::max(width[i], r[i].size());
  }
  for (const auto& r : rows) {
    std::string line;
    for (size_t i = 0; i < r.size(); ++i) {
      line += r[i];
      if (i + 1 < r.size()) line += std::string(width[i] - r[i].size() + 2, ' ');
    }
    std::printf("%s\n", line.c_str());
  }
  if (rows.size() == 1) {
    std::string searched;
    for (const auto& d : dirs) searched += " " + d.string();
    std::fprintf(stderr, "no plugin libraries (libplinth_*.so) in:%s\n", searched.c_str());
  }
}

}  // namespace

void register_plugins(CLI::App& app) {
  CLI::App* plugins = app.add_subcommand("plugins", "Plugin libraries");
  plugins->require_subcommand(1);
  auto opts = std::make_shared<ListOptions>();
  CLI::App* list = plugins->add_subcommand(
      "list", "List plugin libraries: name, kind, version, ABI version, file");
  list->add_option("--path", opts->paths,
                   "Folder to search instead of the default search path (repeatable)");
  list->callback([opts] { list_plugins(*opts); });
}

}  // namespace plinth::cli
