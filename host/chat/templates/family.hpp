#pragma once
// The interface every chat-template family implements (one file per family in this folder), and
// what they share: the prompt under construction, the conversation with message indices for
// errors, Python's str.strip() (the `trim` filter and `.strip()` of the templates).

#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "chat/chat_message.hpp"

namespace plinth::chat {

/// A rendered prompt under construction: template markers (texts the template writes that are
/// special tokens in the family's vocabulary, e.g. "<|im_start|>" or bos_token) and plain text
/// (template literals and message content). ChatTemplate turns markers into special segments
/// when the model's vocabulary has them as special tokens, into plain text otherwise.
class Prompt {
 public:
  struct Piece {
    std::string text;
    bool marker;
  };
  /// Appends a marker; "" (e.g. a model without BOS) appends nothing.
  void marker(std::string_view text);
  /// Appends plain text, merged with plain text before it.
  void text(std::string_view text);
  void append(const Prompt& other);
  /// Python's str.strip() over the whole prompt: whitespace is removed from the plain text at both
  /// ends, stopping at the first marker or other character (as `.strip()` of a Jinja string that
  /// concatenates markers and content).
  void strip();
  const std::vector<Piece>& pieces() const { return pieces_; }

 private:
  std::vector<Piece> pieces_;
};

/// The texts a template gets as bos_token / eos_token ("" = the model has none), its
/// date_string ("" = not given: the template's own default), and enable_thinking (Qwen3's switch;
/// nullopt = undefined in the template).
struct SpecialTexts {
  std::string bos, eos;
  std::string date_string;
  std::optional<bool> enable_thinking;
  /// The request's tools (each an OpenAI tool object's JSON text, members in order), for the
  /// families that define tool calling (Family::supports_tools); null or empty: none.
  const std::vector<std::string>* tools = nullptr;
};

/// The messages a family renders: the caller's, after an optional default system message.
struct Conversation {
  std::span<const ChatMessage> messages;
  /// 1 when messages[0] is the default system prompt ChatTemplate prepended, else 0.
  size_t prepended = 0;
  /// "chat message 3 (role \"user\")" with the caller's index, or "the default system prompt".
  std::string where(size_t i) const;
};

/// A recognised template family. Implementations are stateless singletons; every method may be
/// called from any thread.
class Family {
 public:
  virtual ~Family() = default;
  /// The name `--chat-template NAME` takes, e.g. "llama3".
  virtual std::string_view name() const = 0;
  /// One line for docs and errors, e.g. "Llama 3 (<|start_header_id|> ... <|eot_id|>)".
  virtual std::string_view description() const = 0;
  /// Whether `jinja_text` is this family's template (markers plus the variant's signature).
  virtual bool recognises(std::string_view jinja_text) const = 0;
  /// bos_token / eos_token of the family's models when the vocabulary does not say.
  virtual SpecialTexts default_special_texts() const = 0;
  /// The system prompt the family's template writes when the conversation has none (Qwen2.5's
  /// "You are Qwen, ..."); "" = none. A template text's own literal takes precedence
  /// (extract_chatml_default_system).
  virtual std::string_view default_system() const { return {}; }
  /// How the family's template writes tool calls; kNone: it defines no tool calling. Other
  /// values: render() takes tools (SpecialTexts::tools), assistant turns' tool_calls and "tool"
  /// turns.
  virtual ToolCallSyntax tool_call_syntax() const { return ToolCallSyntax::kNone; }
  bool supports_tools() const { return tool_call_syntax() != ToolCallSyntax::kNone; }
  /// Every marker render() may write except bos / eos.
  virtual std::vector<std::string> markers() const = 0;
  /// Renders `conv` exactly as the family's template does with jinja2 (HF apply_chat_template).
  /// Throws std::invalid_argument naming the message (Conversation::where) where the template
  /// raises (non-alternating roles, a refused role, an empty conversation).
  virtual void render(const Conversation& conv, bool add_generation_prompt, const SpecialTexts& st,
                      Prompt& out) const = 0;
  /// Texts that end an assistant turn (end-of-turn tokens; eos where the template uses it).
  virtual std::vector<std::string> stop_texts(const SpecialTexts& st) const = 0;
};

/// Throws std::invalid_argument "<where>: the <family> chat template <rule>".
[[noreturn]] void throw_message_error(const Conversation& conv, size_t i, std::string_view family,
                                      std::string_view rule);
/// Throws std::invalid_argument for an empty conversation where the template reads messages[0].
[[noreturn]] void throw_empty_error(std::string_view family);
/// Python's str.strip() of UTF-8 text: removes the characters str.isspace() accepts (ASCII
/// whitespace, U+001C..U+001F, U+0085, U+00A0, U+1680, U+2000..U+200A, U+2028, U+2029, U+202F,
/// U+205F, U+3000) from both ends.
std::string python_strip(std::string_view text);
/// A JSON text as the templates' `tojson` filter writes it (Hugging Face's: Python's json.dumps
/// with ensure_ascii=False and sort_keys=False: ", " and ": " separators, members in order).
/// Throws std::invalid_argument when `json_text` is not JSON.
std::string python_tojson(std::string_view json_text);
/// The same with `tojson(indent=N)` (json.dumps(indent=N): members one a line, indented by N
/// spaces a level, "," and ": " separators, "{}" / "[]" when empty).
std::string python_tojson(std::string_view json_text, int indent);
/// Whether `haystack` contains `needle`.
inline bool has(std::string_view haystack, std::string_view needle) {
  return haystack.find(needle) != std::string_view::npos;
}

/// The families, in the order names are listed (recognition tries them in this order too).
std::span<const Family* const> all_families();

const Family& chatml_family();
const Family& qwen2_5_family();
const Family& qwen3_family();
const Family& llama2_family();
const Family& llama3_family();
const Family& llama3_1_family();
const Family& llama3_2_family();
const Family& mistral_family();
const Family& mistral_v1_family();
const Family& mistral_v3_family();
const Family& mistral_nemo_family();
const Family& gemma_family();
const Family& gemma3_family();
const Family& phi3_family();
const Family& zephyr_family();

}  // namespace plinth::chat
