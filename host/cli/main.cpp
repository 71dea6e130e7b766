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

namespace {

// The whole command line; main() only turns an exception that escapes it into an exit code.
int run(int argc, char** argv) {
  CLI::App app{"plinth: LLM inference with serving optimizations loaded as plugins", "plinth"};
  app.set_version_flag("--version", "plinth " PLINTH_VERSION " (plugin ABI " +
                                        std::to_string(PLINTH_ABI_MAJOR) + "." +
                                        std::to_string(PLINTH_ABI_MINOR) + ")");
  app.add_option("--log-level", globals().log_level, "trace, debug, info, warn, error, off")
      ->check(CLI::IsMember({"trace", "debug", "info", "warn", "error", "critical", "off"}))
      ->capture_default_str();
  app.require_subcommand(1);
  // `plinth serve --log-level info` as well as `plinth --log-level info serve`: an option a
  // subcommand does not know falls through to the parent (subcommands inherit the setting).
  app.fallthrough();

  register_plugins(app);
  register_manifest(app);
  register_draft_model(app);
  register_synth_model(app);
  if (register_generate != nullptr) register_generate(app);
  if (register_serve != nullptr) register_serve(app);

  if (argc <= 1) {  // no subcommand: the help, as git and docker print it
    std::fputs(app.help().c_str(), stdout);
    return kExitOk;
  }
  if (argv[1][0] != '-') {  // CLI11 would only say "a subcommand is required"
    std::string names;
    bool known = false;
    for (const CLI::App* sub : app.get_subcommands([](CLI::App*) { return true; })) {
      known = known || sub->get_name() == argv[1];
      names += (names.empty() ? "" : ", ") + sub->get_name();
    }
    if (!known) {
      std::fprintf(stderr,
                   "error: unknown subcommand \"%s\"; one of: %s\n"
                   "usage: plinth [OPTIONS] SUBCOMMAND (plinth --help lists them)\n",
                   argv[1], names.c_str());
      return kExitConfig;
    }
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::RuntimeError& e) {
    return e.get_exit_code();  // a callback's own exit code; it printed already
  } catch (const CLI::ParseError& e) {
    // --help and --version are "errors" with a success code; anything else is a usage error:
    // exit 2 like every other input error, with the usage line of the subcommand at fault.
    if (e.get_exit_code() == static_cast<int>(CLI::ExitCodes::Success)) return app.exit(e);
    std::string sub;
    for (const CLI::App* a = &app; !a->get_subcommands().empty();) {
      a = a->get_subcommands().front();
      sub += " " + a->get_name();
    }
    std::fprintf(stderr, "error: %s\nusage: plinth%s [OPTIONS]%s (plinth%s --help lists them)\n",
                 e.what(), sub.c_str(), sub.empty() ? " SUBCOMMAND" : "", sub.c_str());
    return kExitConfig;
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

}  // namespace

}  // namespace plinth::cli

int main(int argc, char** argv) {
  // An exception outside a subcommand's run (building the options, printing the help) still
  // ends with a message and an exit code, never with std::terminate.
  try {
    return plinth::cli::run(argc, argv);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
  } catch (...) {
    std::fprintf(stderr, "error: an unknown exception ended plinth\n");
  }
  return plinth::cli::kExitError;
}
