#include "runtime/plugin_search.hpp"

#include <dlfcn.h>

#include <algorithm>
#include <cstdlib>
#include <set>

namespace plinth {

namespace fs = std::filesystem;

std::string plugin_file_name(std::string_view short_name) {
  return "libplinth_" + std::string(short_name) + ".so";
}

bool library_is_path(std::string_view library) {
  return library.find('/') != std::string_view::npos ||
         (library.size() > 3 && library.substr(library.size() - 3) == ".so");
}

bool valid_plugin_name(std::string_view name) {
  return !name.empty() && std::all_of(name.begin(), name.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_';
  });
}

fs::path host_binary() {
  // The shared library holding this code (libplinth.so, for a program embedding plinth), else the
  // executable: dladdr names the main program only as it was invoked, /proc/self/exe exactly.
  Dl_info info{};
  if (dladdr(reinterpret_cast<void*>(&host_binary), &info) != 0 && info.dli_fname != nullptr) {
    fs::path p(info.dli_fname);
    if (p.is_absolute() && p.filename().string().find(".so") != std::string::npos) return p;
  }
  std::error_code ec;
  fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  return ec ? fs::path() : exe;
}

std::optional<fs::path> build_tree_plugin_dir(const fs::path& binary) {
  std::error_code ec;
  for (fs::path dir = binary.parent_path(); !dir.empty(); dir = dir.parent_path()) {
    if (fs::is_regular_file(dir / "CMakeCache.txt", ec)) return dir / "plugins";
    if (dir == dir.parent_path()) break;
  }
  return std::nullopt;
}

fs::path installed_plugin_dir(const fs::path& binary) {
  const bool library = binary.filename().string().find(".so") != std::string::npos;
  return (binary.parent_path() /
          (library ? PLINTH_PLUGIN_DIR_FROM_LIBDIR : PLINTH_PLUGIN_DIR_FROM_BINDIR))
      .lexically_normal();
}

std::vector<fs::path> plugin_search_path(const fs::path& manifest_dir) {
  std::vector<fs::path> dirs;
  if (!manifest_dir.empty()) dirs.push_back(manifest_dir);
  if (const char* env = std::getenv("PLINTH_PLUGIN_PATH"); env != nullptr) {
    std::string_view rest(env);
    while (!rest.empty()) {
      size_t colon = rest.find(':');
      std::string_view dir = rest.substr(0, colon);
      if (!dir.empty()) dirs.emplace_back(dir);
      rest = colon == std::string_view::npos ? std::string_view() : rest.substr(colon + 1);
    }
  }
  const fs::path binary = host_binary();
  if (binary.empty()) return dirs;
  if (std::optional<fs::path> build = build_tree_plugin_dir(binary)) dirs.push_back(*build);
  dirs.push_back(installed_plugin_dir(binary));
  return dirs;
}

std::optional<fs::path> resolve_plugin(std::string_view library, const fs::path& manifest_dir) {
  std::error_code ec;
  if (library_is_path(library)) {
    fs::path p(library);
    if (p.is_relative()) p = manifest_dir / p;
    if (fs::is_regular_file(p, ec)) return p.lexically_normal();
    return std::nullopt;
  }
  for (const fs::path& dir : plugin_search_path(manifest_dir)) {
    fs::path p = dir / plugin_file_name(library);
    if (fs::is_regular_file(p, ec)) return p.lexically_normal();
  }
  return std::nullopt;
}

std::vector<fs::path> find_plugin_files(const std::vector<fs::path>& dirs) {
  std::vector<fs::path> out;
  std::set<std::string> seen;
  for (const fs::path& dir : dirs) {
    std::error_code ec;
    if (!fs::is_directory(dir, ec)) continue;
    std::vector<fs::path> here;
    for (const fs::directory_entry& e : fs::directory_iterator(dir, ec)) {
      std::string name = e.path().filename().string();
      if (name.rfind("libplinth_", 0) == 0 && name.size() > 3 &&
          name.substr(name.size() - 3) == ".so" && e.is_regular_file(ec)) {
        here.push_back(e.path());
      }
    }
    std::sort(here.begin(), here.end());
    for (const fs::path& p : here) {
      if (seen.insert(p.filename().string()).second) out.push_back(p.lexically_normal());
    }
  }
  return out;
}

}  // namespace plinth
