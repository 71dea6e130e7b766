#include "runtime/manifest.hpp"

#include <fstream>
#include <set>
#include <sstream>

#include "runtime/json_schema.hpp"
#include "runtime/kinds.hpp"
#include "runtime/plugin_search.hpp"

namespace plinth {

namespace fs = std::filesystem;
using nlohmann::json;

ManifestError::ManifestError(fs::path file, std::string json_path, std::string message)
    : std::runtime_error(file.string() + ": " + json_path + ": " + message),
      file_(std::move(file)),
      json_path_(std::move(json_path)),
      message_(std::move(message)) {}

const PluginEntry* Manifest::find(plinth_plugin_kind kind) const {
  for (const PluginEntry& e : plugins) {
    if (e.kind == kind && !e.is_draft_backend()) return &e;
  }
  return nullptr;
}

const PluginEntry* Manifest::draft_backend() const {
  for (const PluginEntry& e : plugins) {
    if (e.is_draft_backend()) return &e;
  }
  return nullptr;
}

namespace {

// Tracks the JSON path while nlohmann parses, to refuse duplicate keys (which nlohmann would
// silently merge, last one winning) with the path of the second one.
class DuplicateKeyGuard {
 public:
  explicit DuplicateKeyGuard(const fs::path& file) : file_(file) {}

  bool operator()(int /*depth*/, json::parse_event_t event, json& parsed) {
    switch (event) {
      case json::parse_event_t::object_start:
      case json::parse_event_t::array_start:
        frames_.push_back({event == json::parse_event_t::array_start, 0, "", {}, child_path()});
        break;
      case json::parse_event_t::key: {
        Frame& f = frames_.back();
        f.key = parsed.get<std::string>();
        if (!f.keys.insert(f.key).second) {
          throw ManifestError(file_, json_path_key(f.path, f.key),
                              "duplicate key; each key may appear once");
        }
        break;
      }
      case json::parse_event_t::object_end:
      case json::parse_event_t::array_end:
        frames_.pop_back();
        element_done();
        break;
      case json::parse_event_t::value:
        element_done();
        break;
    }
    return true;
  }

 private:
  struct Frame {
    bool array;
    size_t count;
    std::string key;
    std::set<std::string> keys;
    std::string path;
  };
  std::string child_path() const {
    if (frames_.empty()) return "";
    const Frame& f = frames_.back();
    return f.array ? json_path_index(f.path, f.count) : json_path_key(f.path, f.key);
  }
  void element_done() {
    if (!frames_.empty() && frames_.back().array) ++frames_.back().count;
  }
  const fs::path& file_;
  std::vector<Frame> frames_;
};

// "line L, column C" of byte offset `pos` (1-based, as editors count).
std::string position_of(std::string_view text, size_t pos) {
  size_t line = 1, col = 1;
  for (size_t i = 0; i < pos && i < text.size(); ++i) {
    if (text[i] == '\n') {
      ++line;
      col = 1;
    } else {
      ++col;
    }
  }
  return "line " + std::to_string(line) + ", column " + std::to_string(col);
}

json parse_json(std::string_view text, const fs::path& file) {
  DuplicateKeyGuard guard(file);
  try {
    return json::parse(text.begin(), text.end(), std::ref(guard));
  } catch (const json::parse_error& e) {
    // nlohmann's text: "[json.exception.parse_error.101] parse error at line 1, column 2: <what>".
    std::string what = e.what();
    size_t colon = what.find(": ", what.find("column"));
    std::string detail = colon == std::string::npos ? what : what.substr(colon + 2);
    size_t at = e.byte > 0 ? e.byte - 1 : 0;
    throw ManifestError(file, position_of(text, at), "JSON syntax error: " + detail);
  } catch (const json::out_of_range& e) {
    // A number beyond double ("1E400"); nlohmann's text names it.
    throw ManifestError(file, "$", std::string("JSON number out of range: ") + e.what());
  }
}

class Parser {
 public:
  Parser(const fs::path& file, const ManifestOptions& options) : options_(options) {
    m_.file = file;
    std::error_code ec;
    fs::path abs = fs::absolute(file, ec);
    m_.dir = (ec ? file : abs).parent_path().lexically_normal();
  }

  Manifest run(const json& doc) {
    if (!doc.is_object())
      fail("$", "a manifest is a JSON object {\"model\": ..., \"plugins\": [...]}");
    only_keys(doc, "", {"model", "plugins"});
    if (doc.contains("model")) {
      const json& model = doc["model"];
      if (!model.is_string() || model.get<std::string>().empty()) {
        fail("model", "must be a non-empty string (path of a GGUF file), got " + model.dump());
      }
      m_.model = (m_.dir / model.get<std::string>()).lexically_normal();
    }
    if (options_.model_override)
      m_.model = fs::absolute(*options_.model_override).lexically_normal();
    if (!doc.contains("plugins")) {
      fail("plugins",
           "required: the list of plugins (one backend, kv_cache and scheduler at least)");
    }
    const json& plugins = doc["plugins"];
    if (!plugins.is_array())
      fail("plugins", "must be an array, got " + std::string(plugins.type_name()));
    for (size_t i = 0; i < plugins.size(); ++i) m_.plugins.push_back(entry(plugins[i], i));
    check_kinds();
    return std::move(m_);
  }

 private:
  [[noreturn]] void fail(const std::string& path, const std::string& message) const {
    throw ManifestError(m_.file, path, message);
  }

  void only_keys(const json& obj, const std::string& path,
                 std::initializer_list<std::string> allowed) {
    for (const auto& [key, _] : obj.items()) {
      if (std::find(allowed.begin(), allowed.end(), key) != allowed.end()) continue;
      std::string list;
      for (const std::string& a : allowed) list += (list.empty() ? "" : ", ") + a;
      fail(json_path_key(path, key), "unknown key; allowed here: " + list);
    }
  }

  std::string string_field(const json& obj, const std::string& path, const char* key,
                           bool required) {
    std::string at = json_path_key(path, key);
    if (!obj.contains(key)) {
      if (required) fail(at, "required");
      return "";
    }
    const json& v = obj[key];
    if (!v.is_string() || v.get<std::string>().empty()) {
      fail(at, "must be a non-empty string, got " + v.dump());
    }
    return v.get<std::string>();
  }

  PluginEntry entry(const json& p, size_t index) {
    PluginEntry e;
    e.index = index;
    e.json_path = json_path_index("plugins", index);
    const std::string& path = e.json_path;
    if (!p.is_object()) {
      fail(path, "must be an object {\"kind\": ..., \"library\": ..., \"config\": {...}}, got " +
                     std::string(p.type_name()));
    }
    only_keys(p, path, {"kind", "library", "name", "config", "role", "model"});
    std::string kind = string_field(p, path, "kind", true);
    auto k = kind_from_name(kind);
    if (!k) {
      fail(path + ".kind", "unknown kind \"" + kind +
                               "\"; one of backend, kv_cache, scheduler, prefix_cache, "
                               "speculator, graph_runner");
    }
    e.kind = *k;
    e.library = string_field(p, path, "library", true);
    if (!library_is_path(e.library) && !valid_plugin_name(e.library)) {
      fail(path + ".library", "\"" + e.library +
                                  "\" is neither a short name ([a-z0-9_]+, e.g. \"kv_paged\" for "
                                  "libplinth_kv_paged.so) nor a path (containing '/')");
    }
    auto resolved = resolve_plugin(e.library, m_.dir);
    if (!resolved) fail(path + ".library", not_found(e.library));
    e.library_path = *resolved;
    e.name = string_field(p, path, "name", false);
    if (e.name.empty()) {
      std::string stem = e.library_path.stem().string();
      e.name = stem.rfind("libplinth_", 0) == 0 ? stem.substr(10) : stem;
    }
    if (p.contains("config")) {
      if (!p["config"].is_object()) {
        fail(path + ".config",
             "must be an object of the plugin's options, got " + p["config"].dump());
      }
      e.config = p["config"];
    }
    role_and_model(p, e);
    // Target and draft often share a library: the draft's default name tells them apart.
    if (!p.contains("name") && e.is_draft_backend()) e.name += "_draft";
    return e;
  }

  // `role` (backends only: "target", the default, or "draft") and `model` (draft backends only).
  void role_and_model(const json& p, PluginEntry& e) {
    const std::string& path = e.json_path;
    if (p.contains("role")) {
      const json& role = p["role"];
      if (e.kind != PLINTH_KIND_BACKEND) {
        fail(path + ".role", "only a backend has a role (\"target\" or \"draft\"); a " +
                                 std::string(kind_name(e.kind)) + " has none: remove it");
      }
      if (role == "target") {
        e.role = BackendRole::kTarget;
      } else if (role == "draft") {
        e.role = BackendRole::kDraft;
      } else {
        fail(path + ".role",
             "must be \"target\" (the default: runs the top-level `model`) or \"draft\" (runs "
             "its own `model` for the speculator), got " +
                 role.dump());
      }
    }
    if (p.contains("model")) {
      if (!e.is_draft_backend()) {
        fail(path + ".model",
             e.kind == PLINTH_KIND_BACKEND
                 ? "only a draft backend (\"role\": \"draft\") has its own model; the target "
                   "backend runs the top-level `model`: move the path there, or add \"role\": "
                   "\"draft\""
                 : "only a draft backend (\"kind\": \"backend\", \"role\": \"draft\") has its "
                   "own model; the pipeline's model is the top-level `model`: remove it");
      }
      const json& model = p["model"];
      if (!model.is_string() || model.get<std::string>().empty()) {
        fail(path + ".model",
             "must be a non-empty string (path of the draft model's GGUF file), got " +
                 model.dump());
      }
      e.model = (m_.dir / model.get<std::string>()).lexically_normal();
    } else if (e.is_draft_backend()) {
      fail(path + ".model",
           "required on a draft backend: the draft model's GGUF file, e.g. \"model\": "
           "\"../models/draft.gguf\" (relative to the manifest's folder)");
    }
  }

  std::string not_found(const std::string& library) const {
    if (library_is_path(library)) {
      std::string msg = "no file \"";
      msg += library;
      msg += "\" (relative to " + m_.dir.string() + "): fix the path or build the plugin";
      return msg;
    }
    std::string msg = "no library \"" + library + "\" (" + plugin_file_name(library) + ") in";
    for (const fs::path& d : plugin_search_path(m_.dir)) {
      msg += ' ';
      msg += d.string();
      msg += ';';
    }
    return msg +
           " build it, fix the name (see `plinth plugins list`), or add its folder to "
           "PLINTH_PLUGIN_PATH";
  }

  void check_kinds() {
    std::set<std::string> names;
    for (const PluginEntry& e : m_.plugins) {
      for (const PluginEntry& f : m_.plugins) {
        if (f.index >= e.index) break;
        const std::string which =
            " (\"" + e.library + "\"; the first is " + f.json_path + ", \"" + f.library + "\"): ";
        if (f.kind == e.kind && kind_is_single_instance(e.kind)) {
          fail(e.json_path + ".kind", "a second " + std::string(kind_name(e.kind)) + which +
                                          "a pipeline has at most one " +
                                          std::string(kind_name(e.kind)) + ", remove one");
        }
        if (f.kind == e.kind && f.role == e.role && e.is_draft_backend()) {
          fail(e.json_path + ".role", "a second draft backend" + which +
                                          "a pipeline has at most one draft backend, remove one");
        }
        if (f.kind == e.kind && f.role == e.role) {  // two target backends
          fail(e.json_path + ".kind", "a second backend" + which +
                                          "a pipeline has at most one backend (and one draft "
                                          "backend, \"role\": \"draft\"), remove one");
        }
      }
      if (!names.insert(e.name).second) {
        fail(e.json_path + ".name",
             "duplicate plugin name \"" + e.name + "\"; give each a distinct `name`");
      }
    }
    const PluginEntry* draft = m_.draft_backend();
    if (draft != nullptr && m_.find(PLINTH_KIND_BACKEND) == nullptr) {
      fail("plugins", "no target backend: " + draft->json_path +
                          " is the draft backend (\"role\": \"draft\"), which runs only the "
                          "speculator's draft model; add the backend of the served model, e.g. "
                          "{\"kind\": \"backend\", \"library\": \"backend_cpu\"}");
    }
    for (plinth_plugin_kind k : kCreationOrder) {
      if (kind_is_required(k) && m_.find(k) == nullptr) {
        fail("plugins",
             "no " + std::string(kind_name(k)) + " plugin: a pipeline needs exactly one " +
                 "backend, kv_cache and scheduler; add e.g. {\"kind\": \"" +
                 std::string(kind_name(k)) + "\", \"library\": \"" + example_library(k) + "\"}");
      }
    }
    if (draft != nullptr && m_.find(PLINTH_KIND_SPECULATOR) == nullptr) {
      fail(draft->json_path,
           "a draft backend is only used by a speculator: add one (e.g. spec_decode with method "
           "draft: {\"kind\": \"speculator\", \"library\": \"spec_decode\", \"config\": "
           "{\"method\": \"draft\"}}) or remove " +
               draft->json_path);
    }
  }

  static std::string example_library(plinth_plugin_kind k) {
    switch (k) {
      case PLINTH_KIND_BACKEND:
        return "backend_cpu";
      case PLINTH_KIND_KV_CACHE:
        return "kv_paged";
      default:
        return "scheduler_continuous";
    }
  }

  Manifest m_;
  const ManifestOptions& options_;
};

}  // namespace

Manifest parse_manifest(std::string_view text, const fs::path& file,
                        const ManifestOptions& options) {
  json doc = parse_json(text, file);
  return Parser(file, options).run(doc);
}

Manifest load_manifest(const fs::path& file, const ManifestOptions& options) {
  std::ifstream in(file, std::ios::binary);
  if (!in) {
    throw ManifestError(
        file, "$",
        "cannot open the manifest: check the path (" + fs::absolute(file).string() + ")");
  }
  std::ostringstream text;
  text << in.rdbuf();
  return parse_manifest(text.str(), file, options);
}

}  // namespace plinth
