// Chat templates: pieces of the input split at 0x00 are the Jinja text, the default system prompt,
// then role / content pairs. Rendering through a recognised template, through every family by name
// (host/chat/templates/) and through the shared model's must give segments whose concatenation is
// render_text(); errors are std::runtime_error (unrecognised template) or std::invalid_argument
// (unknown role, a conversation the family's template refuses).
#include <string>
#include <vector>

#include "chat/chat_template.hpp"
#include "fuzz_support.hpp"
#include "fuzz_targets.hpp"

namespace plinth::fuzz {
namespace {

void render_checked(const ChatTemplate& chat, const std::vector<ChatMessage>& messages, bool gen) {
  std::vector<ChatTemplate::Segment> segments;
  try {
    segments = chat.render(messages, gen);
  } catch (const std::invalid_argument&) {
    return;
  }
  std::string joined;
  for (const auto& s : segments) joined += s.text;
  crash_if(joined != chat.render_text(messages, gen), "segments differ from render_text()");
  for (size_t i = 1; i < segments.size(); ++i) {
    crash_if(!segments[i].special && !segments[i - 1].special, "adjacent plain segments");
  }
}

}  // namespace

void fuzz_chat_template(const uint8_t* data, size_t size) {
  ByteReader in(data, size);
  const std::string jinja = in.until(0);
  const std::string default_system = in.until(0);
  std::vector<ChatMessage> messages;
  while (!in.empty() && messages.size() < 32) {
    ChatMessage m;
    m.role = in.until(0);
    m.content = in.until(0);
    messages.push_back(std::move(m));
  }
  const bool gen = size > 0 && data[size - 1] % 2 == 0;
  (void)extract_chatml_default_system(jinja);
  try {
    const ChatTemplate chat = ChatTemplate::from_template_text(jinja, default_system);
    render_checked(chat, messages, gen);
    (void)chat.stop_texts();
  } catch (const std::runtime_error&) {
  }
  ChatTemplate::Options by_name;
  by_name.default_system = default_system;
  for (const std::string& family : ChatTemplate::known_families()) {
    render_checked(ChatTemplate::from_family(family, by_name), messages, gen);
  }
  render_checked(*shared_model().chat, messages, gen);
}

}  // namespace plinth::fuzz

PLINTH_FUZZ_ENTRY(plinth::fuzz::fuzz_chat_template)
