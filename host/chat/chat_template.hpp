#pragma once
// Chat templates from GGUF metadata, rendered natively (no Jinja engine) per recognised family.

#include <string>
#include <utility>
#include <vector>

namespace plinth {

/// One turn of a conversation. role: "system" | "user" | "assistant".
struct ChatMessage {
  std::string role;
  std::string content;
};

/// A recognised chat-template family, rendered in C++ so that special tokens stay distinguishable
/// from text a user typed.
///
/// Recognition is from the GGUF `tokenizer.chat_template` Jinja text. Families known today:
///  - ChatML (SmolLM2, Qwen, ...): the text contains "<|im_start|>" and "<|im_end|>". Each message
///    renders as "<|im_start|>{role}\n{content}<|im_end|>\n"; the generation prompt is
///    "<|im_start|>assistant\n". When the template text carries a default system prompt
///    ('<|im_start|>system\n…<|im_end|>' inside a string literal, as SmolLM2's does), it is
///    prepended, like the template does, when the conversation is non-empty and its first message
///    is not a system message.
/// The output equals what jinja2 renders from the template (tests/host/chat/ checks this against
/// tools/reference/chat_fixture.py).
///
/// Thread rules: immutable after construction; render() may be called from any thread.
class ChatTemplate {
 public:
  /// A piece of rendered prompt. special = true: exactly one special token's text (e.g.
  /// "<|im_start|>"), to be mapped to its id; false: plain text, to be BPE-encoded even if it looks
  /// like a special token (so a user typing "<|im_start|>" cannot inject one).
  struct Segment {
    std::string text;
    bool special;
    bool operator==(const Segment&) const = default;
  };

  /// Recognises the family of `jinja_text`. default_system: the system prompt to prepend when the
  /// template itself has none and the conversation does not start with a system message; empty =
  /// none. The template's own default wins when present, so rendering matches the template.
  /// Throws std::runtime_error naming the template (its first 80 characters) when unrecognised.
  static ChatTemplate from_template_text(const std::string& jinja_text, std::string default_system);

  /// Renders messages (+ "<|im_start|>assistant\n" when add_generation_prompt) as segments;
  /// adjacent plain parts are merged. Throws std::invalid_argument naming the role and the message
  /// index when a role is not system / user / assistant.
  std::vector<Segment> render(const std::vector<ChatMessage>& messages,
                              bool add_generation_prompt) const;

  /// The segments concatenated, for display and tests.
  std::string render_text(const std::vector<ChatMessage>& messages,
                          bool add_generation_prompt) const;

  /// Texts that end an assistant turn; the engine adds their token ids to the stop tokens.
  std::vector<std::string> stop_texts() const;

  /// The system prompt prepended when the conversation has none (empty: none).
  const std::string& default_system() const { return default_system_; }
  /// Family name, e.g. "chatml".
  const std::string& family() const { return family_; }

 private:
  ChatTemplate(std::string family, std::string default_system)
      : family_(std::move(family)), default_system_(std::move(default_system)) {}

  std::string family_;
  std::string default_system_;
};

/// The default system prompt written into a ChatML template text, or "" when it has none. Looks for
/// "<|im_start|>system" followed by a newline (literal or the escape "\n") inside a Jinja string
/// literal, and returns the text up to "<|im_end|>", with Jinja string escapes undone.
std::string extract_chatml_default_system(const std::string& jinja_text);

}  // namespace plinth
