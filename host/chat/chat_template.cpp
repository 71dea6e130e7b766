#include "chat/chat_template.hpp"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string_view>

#include "chat/templates/family.hpp"

namespace plinth {
namespace {

bool known_role(const std::string& role) {
  return role == "system" || role == "user" || role == "assistant";
}

std::string family_list() {
  std::string out;
  for (const chat::Family* f : chat::all_families()) {
    if (!out.empty()) out += ", ";
    out += std::string(f->name());
  }
  return out;
}

const chat::Family* recognise(std::string_view jinja_text) {
  for (const chat::Family* f : chat::all_families()) {
    if (f->recognises(jinja_text)) return f;
  }
  return nullptr;
}

}  // namespace

ChatTemplate::ChatTemplate(const chat::Family& family, const Options& options,
                           std::string default_system)
    : family_(&family), family_name_(family.name()), default_system_(std::move(default_system)) {
  const chat::SpecialTexts usual = family.default_special_texts();
  bos_ = options.bos_token.value_or(usual.bos);
  eos_ = options.eos_token.value_or(usual.eos);
  date_string_ = options.date_string;
  if (options.is_special_token) {
    std::vector<std::string> candidates = family.markers();
    candidates.push_back(bos_);
    candidates.push_back(eos_);
    for (const std::string& m : candidates) {
      if (!m.empty() && !options.is_special_token(m)) plain_markers_.push_back(m);
    }
  }
}

ChatTemplate ChatTemplate::from_template_text(const std::string& jinja_text,
                                              std::string default_system) {
  Options options;
  options.default_system = std::move(default_system);
  return from_template_text(jinja_text, options);
}

ChatTemplate ChatTemplate::from_template_text(const std::string& jinja_text,
                                              const Options& options) {
  const chat::Family* family = recognise(jinja_text);
  if (!family) {
    const std::string shown = jinja_text.substr(0, 80);
    throw std::runtime_error("unrecognised chat template \"" + shown +
                             (jinja_text.size() > 80 ? "...\"" : "\"") +
                             ": plinth renders these families: " + family_list() +
                             "; pass --chat-template NAME to render the model's prompts as one of "
                             "them, or --chat-template FILE with one of their templates");
  }
  std::string system = options.default_system;
  if (system.empty()) system = std::string(family->default_system());
  if (family == &chat::chatml_family() || family == &chat::qwen2_5_family()) {
    std::string own = extract_chatml_default_system(jinja_text);
    if (!own.empty()) system = std::move(own);
  }
  return ChatTemplate(*family, options, std::move(system));
}

ChatTemplate ChatTemplate::from_family(std::string_view name, const Options& options) {
  for (const chat::Family* f : chat::all_families()) {
    if (f->name() == name) {
      return ChatTemplate(*f, options,
                          options.default_system.empty() ? std::string(f->default_system())
                                                         : options.default_system);
    }
  }
  throw std::invalid_argument("unknown chat template family \"" + std::string(name) +
                              "\"; known: " + family_list());
}

ChatTemplate ChatTemplate::from_name_or_file(const std::string& spec, const Options& options) {
  const auto names = known_families();
  if (std::find(names.begin(), names.end(), spec) != names.end()) {
    return from_family(spec, options);
  }
  std::error_code ec;
  if (!std::filesystem::is_regular_file(spec, ec)) {
    throw std::invalid_argument("chat template \"" + spec + "\" is neither a family name (" +
                                family_list() + ") nor a template file");
  }
  std::ifstream in(spec, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  if (!in) throw std::invalid_argument("chat template file " + spec + ": cannot read it");
  try {
    return from_template_text(text.str(), options);
  } catch (const std::runtime_error& e) {
    throw std::runtime_error(spec + ": " + e.what());
  }
}

std::vector<std::string> ChatTemplate::known_families() {
  std::vector<std::string> out;
  for (const chat::Family* f : chat::all_families()) out.emplace_back(f->name());
  return out;
}

std::vector<ChatTemplate::Segment> ChatTemplate::render(const std::vector<ChatMessage>& messages,
                                                        bool add_generation_prompt,
                                                        const RenderOptions& options) const {
  const bool tools = family_->supports_tools();
  for (size_t i = 0; i < messages.size(); ++i) {
    if (!known_role(messages[i].role) && !(tools && messages[i].role == "tool")) {
      throw std::invalid_argument("chat message " + std::to_string(i) + " has unknown role \"" +
                                  messages[i].role + "\"; allowed roles: system, user, assistant" +
                                  (tools ? ", tool" : ""));
    }
  }
  // The default system turn only precedes a non-empty conversation (as SmolLM2's template does).
  std::vector<ChatMessage> with_default;
  chat::Conversation conv{messages, 0};
  if (!messages.empty() && messages.front().role != "system" && !default_system_.empty()) {
    with_default.push_back({"system", default_system_});
    with_default.insert(with_default.end(), messages.begin(), messages.end());
    conv = {with_default, 1};
  }
  chat::Prompt prompt;
  family_->render(conv, add_generation_prompt,
                  {bos_, eos_, date_string_, options.enable_thinking, &options.tools}, prompt);
  if (add_generation_prompt) prompt.marker(options.reply_prefix_marker);

  std::vector<Segment> out;
  for (const chat::Prompt::Piece& p : prompt.pieces()) {
    const bool special = p.marker && std::find(plain_markers_.begin(), plain_markers_.end(),
                                               p.text) == plain_markers_.end();
    if (!special && !out.empty() && !out.back().special) {
      out.back().text += p.text;
    } else {
      out.push_back({p.text, special});
    }
  }
  return out;
}

std::string ChatTemplate::render_text(const std::vector<ChatMessage>& messages,
                                      bool add_generation_prompt,
                                      const RenderOptions& options) const {
  std::string text;
  for (const auto& s : render(messages, add_generation_prompt, options)) text += s.text;
  return text;
}

bool ChatTemplate::supports_tools() const {
  return family_->supports_tools();
}

ToolCallSyntax ChatTemplate::tool_call_syntax() const {
  return family_->tool_call_syntax();
}

std::vector<std::string> ChatTemplate::stop_texts() const {
  std::vector<std::string> out;
  for (std::string& t : family_->stop_texts({bos_, eos_, date_string_, {}, nullptr})) {
    if (!t.empty() && std::find(out.begin(), out.end(), t) == out.end())
      out.push_back(std::move(t));
  }
  return out;
}

}  // namespace plinth
