#pragma once
// plinth::embed::Engine — one served model, loaded from a manifest, for a program that embeds
// plinth (CMake: find_package(plinth) and link plinth::engine; docs/server.md, "Embedding"). It
// owns the model, its tokenizer, the plugin pipeline and the engine thread that runs requests;
// serve it over HTTP with plinth::embed::Server (plinth/embed/server.hpp, plinth::server). This
// header needs nothing but the C++ standard library; the host's internals stay inside libplinth.so.

#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>

#include "plinth/embed/export.hpp"

namespace plinth::embed {

struct EngineOptions {
  /// The model file, instead of the manifest's `model` (relative paths: to the working folder).
  std::filesystem::path model;
  /// Longest sequence (prompt + generated tokens); 0 = the model's context length.
  uint32_t max_model_len = 0;
  /// A chat template family name or a Jinja file, instead of the model's; "" = the model's.
  std::string chat_template;
  /// Requests admitted and not yet finished, at most (past it the server answers 429).
  size_t max_pending = 256;
};

class PLINTH_EMBED_API Engine {
 public:
  /// Loads `manifest` (docs/manifest.md: a model relative to the manifest's folder; plugin
  /// libraries by short name from the manifest's folder, PLINTH_PLUGIN_PATH, then the plugin folder
  /// of the installed prefix libplinth.so belongs to) and starts the engine thread.
  /// Throws std::runtime_error whose what() names the file and the mistake (a bad manifest, a
  /// missing or malformed model, a plugin that refuses its config).
  static std::unique_ptr<Engine> load(const std::filesystem::path& manifest,
                                      const EngineOptions& options = {});
  /// Stops the engine thread; unfinished requests are aborted.
  ~Engine();
  Engine(const Engine&) = delete;
  Engine& operator=(const Engine&) = delete;

  /// A short model name: the GGUF's general.name, else the file stem.
  const std::string& model_name() const;
  /// Prompt + completion tokens at most per sequence (EngineOptions::max_model_len or the model's
  /// context length).
  uint32_t max_model_len() const;

  struct Impl;  ///< the host's AsyncEngine and what it serves (embed/src/engine_impl.hpp)
  /// The implementation, for plinth::embed::Server.
  Impl& impl() { return *impl_; }

 private:
  explicit Engine(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace plinth::embed
