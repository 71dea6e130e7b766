// plinth: the command-line entry. Subcommands live one per file (commands.hpp).
#include <cstdio>
#include <exception>

#include "cli/commands.hpp"
#include "plinth/abi.h"
#include "runtime/logging.hpp"
#include "runtime/manifest.hpp"
#include "runtime/plugin_library.hpp"

namespace plinth::cli {

GlobalOptions& globals() {
  static GlobalOptions options;
  return options;
}

std::shared_ptr<spdlog::logger> make_logger() {
  return make_stderr_logger(parse_log_level(globals().log_level));
}

}  // namespace plinth::cli

int main(int argc, char** argv) {
  using namespace plinth::cli;
  CLI::App app{"plinth: LLM inference with serving optimizations loaded as plugins"};
  app.set_version_flag("--version", "plinth " PLINTH_VERSION " (plugin ABI " +
                                        std::to_string(PLINTH_ABI_MAJOR) + "." +
                                        std::to_string(PLINTH_ABI_MINOR) + ")");
  app.add_option("--log-level", globals().log_level, "trace, debug, info, warn, error, off")
      ->check(CLI::IsMember({"trace", "debug", "info", "warn", "error", "critical", "off"}))
      ->capture_default_str();
  app.require_subcommand(1);

  register_plugins(app);
  register_manifest(app);
  register_draft_model(app);
  register_synth_model(app);
  if (register_generate != nullptr) register_generate(app);
  if (register_serve != nullptr) register_serve(app);

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  } catch (const plinth::ManifestError& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return kExitConfig;
  } catch (const plinth::PluginConfigError& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return kExitConfig;
  } catch (const plinth::PluginError& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return kExitPlugin;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return kExitError;
  }
  return kExitOk;
}
