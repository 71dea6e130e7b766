#pragma once
// The `--chat-template NAME|FILE` option of `plinth generate` and `plinth serve`.

#include <string>

#include <CLI/CLI.hpp>

namespace plinth::cli {

/// Adds `--chat-template NAME|FILE` to `cmd`, stored in `target` ("" when not given): a chat
/// template family name or a Jinja template file, rendered instead of the model's
/// tokenizer.chat_template. Checked while parsing (ChatTemplate::from_name_or_file), so an
/// unknown name, a missing file or a file whose template no family recognises is a usage error
/// (exit 2) naming the value, the template's first characters and the known families.
CLI::Option* add_chat_template_option(CLI::App* cmd, std::string& target);

}  // namespace plinth::cli
