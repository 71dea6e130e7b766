#pragma once
// The `plinth` executable's subcommands: one file per subcommand (cmd_<name>.cpp) defining
// `void register_<name>(CLI::App& app)`, which adds the subcommand and its callback. main.cpp calls
// each; a subcommand whose file does not exist yet is declared weak here, so main skips it.
//
// A callback reports failure by throwing; main turns the exception into a message on stderr and
// an exit code:
//   ManifestError -> "error: <file>: <json path>: <message>", exit 2 (kExitConfig)
//   PluginConfigError (a plugin refused its config) -> "error: <message>", exit 2 (kExitConfig)
//   PluginError   -> "error: <message>", exit 3 (kExitPlugin)
//   std::exception -> "error: <message>", exit 1 (kExitError)
//   CLI::RuntimeError(code) -> exit `code`, nothing printed (the callback printed already)
//   any other CLI::ParseError (unknown option, bad value, missing subcommand) -> "error: <message>"
//     and the usage line, exit 2 (kExitConfig); --help / --version exit 0; no arguments at all
//     prints the help, exit 0

#include <memory>
#include <string>

#include <spdlog/spdlog.h>
#include <CLI/CLI.hpp>

namespace plinth::cli {

inline constexpr int kExitOk = 0;
inline constexpr int kExitError = 1;
inline constexpr int kExitConfig = 2;
inline constexpr int kExitPlugin = 3;

/// Options of the `plinth` command itself, parsed before any subcommand callback runs.
struct GlobalOptions {
  std::string log_level = "warn";  // --log-level
};
GlobalOptions& globals();

/// A stderr logger at --log-level.
std::shared_ptr<spdlog::logger> make_logger();

void register_plugins(CLI::App& app);                 // cmd_plugins.cpp: plinth plugins list
void register_manifest(CLI::App& app);                // cmd_manifest.cpp: plinth manifest check
void register_draft_model(CLI::App& app);             // cmd_draft_model.cpp: plinth draft-model
void register_synth_model(CLI::App& app);             // cmd_synth_model.cpp: plinth synth-model
[[gnu::weak]] void register_generate(CLI::App& app);  // cmd_generate.cpp
[[gnu::weak]] void register_serve(CLI::App& app);     // cmd_serve.cpp

}  // namespace plinth::cli
