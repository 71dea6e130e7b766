#pragma once
// Chat templates from GGUF metadata, rendered natively (no Jinja engine) per recognised family.

#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "chat/chat_message.hpp"

namespace plinth {

namespace chat {
class Family;
}

/// A recognised chat-template family, rendered in C++ so that special tokens stay distinguishable
/// from text a user typed.
///
/// Recognition is from the Jinja text (the GGUF `tokenizer.chat_template`, or a file given to
/// `--chat-template`): each family looks for its markers plus the phrases that tell its variant
/// apart (host/chat/templates/<family>.cpp). Families: chatml, qwen2.5, qwen3, llama2, llama3,
/// llama3.1, llama3.2, mistral, mistral-v1, mistral-v3, mistral-nemo, gemma, gemma3, phi3, zephyr
/// (docs/architecture.md, "Chat templates").
/// The output equals what jinja2 renders from each family's real template, as Hugging Face's
/// apply_chat_template runs it (tests/host/chat/ checks this against
/// tools/reference/chat_fixture.py), including where the template raises.
///
/// Default system prompt (ChatML, Qwen2.5): when the template text carries one
/// ('<|im_start|>system\n…<|im_end|>' inside a string literal, as SmolLM2's and Qwen2.5's do), or
/// the family has one (Qwen2.5 by name), it is prepended, like the template does, when the
/// conversation is non-empty and does not start with a system message.
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

  struct Options {
    /// The system prompt to prepend when the template has none of its own and the conversation
    /// does not start with a system message; empty = none.
    std::string default_system;
    /// What the template gets as bos_token / eos_token: the model's BOS / EOS token text, "" when
    /// the model has none; nullopt = the family's usual text (e.g. "<s>", "<|begin_of_text|>").
    std::optional<std::string> bos_token, eos_token;
    /// What Llama 3.1+ templates print as "Today Date:" (their date_string, e.g. "05 Mar 2026");
    /// "" = as the template does without one: Llama 3.1's "26 Jul 2024", Llama 3.2's today
    /// (HF's strftime_now("%d %b %Y"), local time, at each render).
    std::string date_string;
    /// Whether a text is a special token of the model's vocabulary. Template markers (and BOS /
    /// EOS) it rejects render as plain text (e.g. Llama 2's "[INST]", Zephyr's "<|user|>"); null =
    /// every marker is special. Called only while constructing, not kept.
    std::function<bool(std::string_view)> is_special_token;
  };

  /// Per-render template variables.
  struct RenderOptions {
    /// Qwen3's enable_thinking: false = the generation prompt opens an empty think block;
    /// nullopt = undefined in the template (thinking on). Other families ignore it.
    std::optional<bool> enable_thinking;
    /// The request's tools, each an OpenAI tool object's JSON text ({"type": "function",
    /// "function": {...}}, members in order); rendered by the families whose templates define
    /// tool calling (supports_tools()), ignored by the others.
    std::vector<std::string> tools;
    /// A marker written after the generation prompt, starting the assistant's reply (the server's
    /// "[TOOL_CALLS]" when Mistral Nemo must call a tool); one of the family's markers, a special
    /// segment when the vocabulary has it. "" = none.
    std::string reply_prefix_marker;
  };

  /// Recognises the family of `jinja_text`, with Options{default_system}.
  static ChatTemplate from_template_text(const std::string& jinja_text, std::string default_system);
  /// Recognises the family of `jinja_text`. Throws std::runtime_error naming the template (its
  /// first 80 characters) and the known families when no family recognises it.
  static ChatTemplate from_template_text(const std::string& jinja_text, const Options& options);
  /// The family called `name` (known_families()). Throws std::invalid_argument naming it and the
  /// known families.
  static ChatTemplate from_family(std::string_view name, const Options& options);
  /// `--chat-template NAME|FILE`: a family name, else a file whose Jinja text is recognised as by
  /// from_template_text. Throws std::invalid_argument when `spec` is neither a family name nor a
  /// readable file, std::runtime_error (naming the file) when the file's template is unrecognised.
  static ChatTemplate from_name_or_file(const std::string& spec, const Options& options);
  /// The family names: chatml, qwen2.5, qwen3, llama2, llama3, llama3.1, llama3.2, mistral,
  /// mistral-v1, mistral-v3, mistral-nemo, gemma, gemma3, phi3, zephyr.
  static std::vector<std::string> known_families();

  /// Renders messages (+ the family's generation prompt when add_generation_prompt) as segments;
  /// adjacent plain parts are merged. Throws std::invalid_argument naming the role and the message
  /// index when a role is not system / user / assistant, or where the family's template raises
  /// (e.g. Gemma and Mistral on roles that do not alternate, Gemma on a system message, most
  /// families on an empty conversation).
  std::vector<Segment> render(const std::vector<ChatMessage>& messages,
                              bool add_generation_prompt) const {
    return render(messages, add_generation_prompt, RenderOptions{});
  }
  /// As above, with template variables.
  std::vector<Segment> render(const std::vector<ChatMessage>& messages, bool add_generation_prompt,
                              const RenderOptions& options) const;

  /// The segments concatenated, for display and tests.
  std::string render_text(const std::vector<ChatMessage>& messages, bool add_generation_prompt,
                          const RenderOptions& options = {}) const;

  /// Texts that end an assistant turn; the engine adds their token ids to the stop tokens.
  std::vector<std::string> stop_texts() const;

  /// The system prompt prepended when the conversation has none (empty: none).
  const std::string& default_system() const { return default_system_; }
  /// Whether the family's template defines tool calling: render() then takes
  /// RenderOptions::tools, assistant messages' tool_calls and "tool" messages (others refuse the
  /// "tool" role; the server writes tool turns as text for them).
  bool supports_tools() const;
  /// How the family writes tool calls (kNone: it defines none).
  ToolCallSyntax tool_call_syntax() const;
  /// Family name, e.g. "chatml", "llama3".
  const std::string& family() const { return family_name_; }
  /// The bos_token / eos_token texts the rendering uses ("" = none).
  const std::string& bos_token() const { return bos_; }
  const std::string& eos_token() const { return eos_; }

 private:
  ChatTemplate(const chat::Family& family, const Options& options, std::string default_system);

  const chat::Family* family_;
  std::string family_name_;
  std::string default_system_;
  std::string bos_, eos_, date_string_;
  std::vector<std::string> plain_markers_;  // markers the vocabulary has no special token for
};

/// The default system prompt written into a ChatML template text, or "" when it has none. Looks for
/// "<|im_start|>system" followed by a newline (literal or the escape "\n") inside a Jinja string
/// literal, and returns the text up to "<|im_end|>", with Jinja string escapes undone.
std::string extract_chatml_default_system(const std::string& jinja_text);

}  // namespace plinth
