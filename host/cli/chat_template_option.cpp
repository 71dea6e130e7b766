#include "cli/chat_template_option.hpp"

#include <exception>

#include "chat/chat_template.hpp"

namespace plinth::cli {

CLI::Option* add_chat_template_option(CLI::App* cmd, std::string& target) {
  std::string names;
  for (const std::string& n : ChatTemplate::known_families()) {
    names += (names.empty() ? "" : ", ") + n;
  }
  const CLI::Validator name_or_file(
      [](std::string& value) -> std::string {
        try {
          (void)ChatTemplate::from_name_or_file(value, {});
        } catch (const std::exception& e) {
          return e.what();
        }
        return "";
      },
      "NAME|FILE", "chat template");
  return cmd
      ->add_option("--chat-template", target,
                   "chat template instead of the model's tokenizer.chat_template: a family name (" +
                       names + ") or a Jinja template file of one of them")
      ->check(name_or_file);
}

}  // namespace plinth::cli
