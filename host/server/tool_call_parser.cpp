#include "server/tool_call_parser.hpp"

#include <algorithm>
#include <cstdint>
#include <optional>
#include <random>
#include <utility>

#include "server/tool_request.hpp"
#include "tokenizer/utf8.hpp"

namespace plinth::server {

void ToolCallResult::apply(const ToolEvent& e) {
  switch (e.kind) {
    case ToolEvent::Kind::kContent:
      content += e.text;
      has_content = true;
      break;
    case ToolEvent::Kind::kCallStart:
      if (calls.size() <= e.index) calls.resize(e.index + 1);
      calls[e.index].name = e.text;
      break;
    case ToolEvent::Kind::kArguments:
      if (calls.size() <= e.index) calls.resize(e.index + 1);
      calls[e.index].arguments += e.text;
      break;
  }
}

std::string random_tool_id(std::string_view prefix) {
  static constexpr char kAlphabet[] =
      "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
  thread_local std::mt19937_64 rng{std::random_device{}()};
  std::uniform_int_distribution<size_t> pick(0, sizeof(kAlphabet) - 2);
  std::string id(prefix);
  for (int i = 0; i < 24; ++i) id += kAlphabet[pick(rng)];
  return id;
}

void feed_reply(ToolCallParser& parser, std::string_view text, std::optional<size_t> trigger_offset,
                bool finished, std::vector<ToolEvent>& out) {
  if (trigger_offset && *trigger_offset <= text.size()) {
    parser.feed(text.substr(0, *trigger_offset), out);
    parser.trigger(out);
    parser.feed(text.substr(*trigger_offset), out);
  } else {
    parser.feed(text, out);
  }
  if (finished) parser.finish(out);
}

ToolCallResult parse_tool_reply(ToolCallParser& parser, std::string_view text) {
  std::vector<ToolEvent> events;
  parser.feed(text, events);
  parser.finish(events);
  ToolCallResult r;
  for (const ToolEvent& e : events) r.apply(e);
  return r;
}

namespace {

int hex_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

bool is_space(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

/// Where the calls sit in a JSON reply.
struct Layout {
  std::string calls_key;    ///< the root member holding the calls ("" = the root itself)
  bool calls_array = true;  ///< the calls are an array (else the value is one call)
  std::string name_key = "name";
  std::string args_key = "arguments";
  std::string response_key;   ///< the root member holding a text reply ("" = none)
  bool response_raw = false;  ///< the reply is the member's JSON text, also when a string
};

/// A streaming JSON reader that reports the calls of `Layout` as ToolEvents. The input is trusted
/// to be JSON (the grammar forces it); anything else yields what can be read.
class JsonCallScanner {
 public:
  explicit JsonCallScanner(Layout layout) : layout_(std::move(layout)) {}

  void feed(std::string_view text, std::vector<ToolEvent>& out) { feed_until_done(text, out); }

  /// Feeds `text` up to the end of the root value; returns the bytes consumed.
  size_t feed_until_done(std::string_view text, std::vector<ToolEvent>& out) {
    out_ = &out;
    size_t used = 0;
    while (used < text.size() && !done_) step(text[used++]);
    if (in_literal_ && done_) in_literal_ = false;
    flush();
    out_ = nullptr;
    return used;
  }

  /// The root value has ended.
  bool done() const { return done_; }
  /// The index of the first call this scanner reports (calls before it came from other scanners).
  void set_base(size_t base) { base_ = base; }
  /// One past the index of the last call started (the base counts).
  size_t calls_started() const { return std::max(base_, started_.size()); }

 private:
  enum class Capture { kNone, kArguments, kName, kResponseText, kResponseRaw };
  struct Frame {
    bool object = false;
    bool has_key = false;  // object: the current member's key has been read
    std::string key;
    size_t index = 0;  // array: the current element
  };

  void step(char c) {
    if (in_string_) return string_char(c);
    if (in_literal_ && (is_space(c) || c == ',' || c == '}' || c == ']')) {
      in_literal_ = false;
      value_end();
    }
    if (is_space(c)) return;
    const bool starts_value =
        c == '"' ? !(top_is_object() && !stack_.back().has_key)
                 : (c == '{' || c == '[' ||
                    (!in_literal_ && c != '}' && c != ']' && c != ',' && c != ':'));
    if (starts_value) value_start(c == '"');
    if (capture_ == Capture::kArguments || capture_ == Capture::kResponseRaw) pending_ += c;
    switch (c) {
      case '"':
        in_string_ = true;
        string_is_key_ = !starts_value;
        key_.clear();
        break;
      case '{':
      case '[':
        stack_.push_back(Frame{c == '{', false, {}, 0});
        break;
      case '}':
      case ']':
        if (!stack_.empty()) stack_.pop_back();
        value_end();
        break;
      case ',':
        if (!stack_.empty()) {
          if (stack_.back().object) {
            stack_.back().has_key = false;
          } else {
            ++stack_.back().index;
          }
        }
        break;
      case ':':
        break;
      default:
        in_literal_ = true;
        break;
    }
  }

  void string_char(char c) {
    if (capture_ == Capture::kArguments || capture_ == Capture::kResponseRaw) pending_ += c;
    if (escape_ == 1) {
      escape_ = 0;
      switch (c) {
        case 'u':
          escape_ = 2;
          hex_ = 0;
          return;
        case 'n':
          return decoded('\n');
        case 't':
          return decoded('\t');
        case 'r':
          return decoded('\r');
        case 'b':
          return decoded('\b');
        case 'f':
          return decoded('\f');
        default:
          return decoded(c);  // '"', '\\', '/'
      }
    }
    if (escape_ >= 2) {
      const int h = hex_value(c);
      hex_ = hex_ * 16 + static_cast<uint32_t>(h < 0 ? 0 : h);
      if (++escape_ < 6) return;
      escape_ = 0;
      return code_point(hex_);
    }
    if (c == '\\') {
      escape_ = 1;
      return;
    }
    if (c == '"') {
      in_string_ = false;
      if (string_is_key_) {
        if (!stack_.empty()) {
          stack_.back().key = key_;
          stack_.back().has_key = true;
        }
      } else {
        value_end();
      }
      return;
    }
    decoded(c);
  }

  void code_point(uint32_t cp) {
    if (cp >= 0xD800 && cp < 0xDC00) {
      high_surrogate_ = cp;
      return;
    }
    std::string s;
    if (cp >= 0xDC00 && cp < 0xE000 && high_surrogate_) {
      utf8::append(s, 0x10000 + ((*high_surrogate_ - 0xD800) << 10) + (cp - 0xDC00));
    } else {
      utf8::append(s, cp);
    }
    high_surrogate_.reset();
    for (char ch : s) decoded(ch);
  }

  // A character of a string's decoded value.
  void decoded(char c) {
    if (string_is_key_) {
      key_ += c;
    } else if (capture_ == Capture::kName) {
      name_ += c;
    } else if (capture_ == Capture::kResponseText) {
      pending_ += c;
    }
  }

  bool top_is_object() const { return !stack_.empty() && stack_.back().object; }

  // The member keys / element indices from the root to the value about to start.
  std::vector<std::string> path() const {
    std::vector<std::string> p;
    p.reserve(stack_.size());
    for (const Frame& f : stack_) p.push_back(f.object ? f.key : std::to_string(f.index));
    return p;
  }

  void value_start(bool is_string) {
    if (capture_ != Capture::kNone) return;  // inside a captured value
    const std::vector<std::string> p = path();
    const size_t prefix = layout_.calls_key.empty() ? 0 : 1;
    if (!layout_.response_key.empty() && p.size() == 1 && p[0] == layout_.response_key) {
      begin(is_string && !layout_.response_raw ? Capture::kResponseText : Capture::kResponseRaw, 0);
      return;
    }
    if (prefix == 1 && (p.empty() || p[0] != layout_.calls_key)) return;
    const size_t depth = prefix + (layout_.calls_array ? 2 : 1);
    if (p.size() != depth) return;
    size_t index = base_;
    if (layout_.calls_array) index += stack_[prefix].index;
    const std::string& key = p.back();
    if (key == layout_.args_key) {
      begin(Capture::kArguments, index);
    } else if (key == layout_.name_key && is_string) {
      begin(Capture::kName, index);
    }
  }

  void begin(Capture what, size_t index) {
    capture_ = what;
    capture_depth_ = stack_.size();
    capture_index_ = index;
    name_.clear();
  }

  void value_end() {
    if (stack_.empty()) done_ = true;
    if (capture_ == Capture::kNone || stack_.size() != capture_depth_) return;
    if (capture_ == Capture::kName) {
      started_.resize(std::max(started_.size(), capture_index_ + 1), false);
      if (!started_[capture_index_]) {
        started_[capture_index_] = true;
        out_->push_back({ToolEvent::Kind::kCallStart, capture_index_, name_});
        if (capture_index_ < held_.size() && !held_[capture_index_].empty()) {
          out_->push_back({ToolEvent::Kind::kArguments, capture_index_, held_[capture_index_]});
          held_[capture_index_].clear();
        }
      }
    }
    const bool response = capture_ == Capture::kResponseText || capture_ == Capture::kResponseRaw;
    if (response && pending_.empty() && !response_sent_) {
      out_->push_back({ToolEvent::Kind::kContent, 0, ""});  // an empty reply is a reply
    }
    flush();
    capture_ = Capture::kNone;
  }

  // Sends what the current capture holds.
  void flush() {
    if (pending_.empty()) return;
    if (capture_ == Capture::kArguments) {
      const size_t i = capture_index_;
      if (i < started_.size() && started_[i]) {
        out_->push_back({ToolEvent::Kind::kArguments, i, pending_});
      } else {  // the arguments before the name: held until the call starts
        held_.resize(std::max(held_.size(), i + 1));
        held_[i] += pending_;
      }
    } else if (capture_ == Capture::kResponseText || capture_ == Capture::kResponseRaw) {
      out_->push_back({ToolEvent::Kind::kContent, 0, pending_});
      response_sent_ = true;
    }
    pending_.clear();
  }

  Layout layout_;
  size_t base_ = 0;
  std::vector<Frame> stack_;
  bool in_string_ = false, string_is_key_ = false, in_literal_ = false, done_ = false;
  bool response_sent_ = false;  // some of the response's content was sent
  int escape_ = 0;              // 0 none, 1 after '\', 2..5 reading \u's hex digits
  uint32_t hex_ = 0;
  std::optional<uint32_t> high_surrogate_;
  std::string key_, name_, pending_;
  Capture capture_ = Capture::kNone;
  size_t capture_depth_ = 0, capture_index_ = 0;
  std::vector<bool> started_;
  std::vector<std::string> held_;
  std::vector<ToolEvent>* out_ = nullptr;
};

class EnvelopeParser final : public ToolCallParser {
 public:
  explicit EnvelopeParser(Layout layout) : scanner_(std::move(layout)) {}
  void feed(std::string_view text, std::vector<ToolEvent>& out) override {
    scanner_.feed(text, out);
  }

 private:
  JsonCallScanner scanner_;
};

/// Free text until the grammar trigger (a control token the engine reports by its offset, never
/// text: a user or the model writing "[TOOL_CALLS]" as text writes content), then the calls
/// `after` reads (Mistral Nemo under tool_choice auto). Whitespace before the trigger is dropped
/// (held until other text follows it); text after the calls has no place in the grammar.
class TriggeredParser final : public ToolCallParser {
 public:
  explicit TriggeredParser(std::unique_ptr<ToolCallParser> after) : after_(std::move(after)) {}
  void feed(std::string_view text, std::vector<ToolEvent>& out) override {
    if (triggered_) return after_->feed(text, out);
    held_ws_.append(text);
    const size_t last = held_ws_.find_last_not_of(" \t\r\n");
    if (last == std::string::npos) return;
    out.push_back({ToolEvent::Kind::kContent, 0, held_ws_.substr(0, last + 1)});
    held_ws_.erase(0, last + 1);
  }
  void trigger(std::vector<ToolEvent>& out) override {
    (void)out;
    triggered_ = true;
    held_ws_.clear();
  }
  void finish(std::vector<ToolEvent>& out) override {
    if (triggered_) return after_->finish(out);
    if (!held_ws_.empty()) out.push_back({ToolEvent::Kind::kContent, 0, std::move(held_ws_)});
    held_ws_.clear();
  }

 private:
  std::unique_ptr<ToolCallParser> after_;
  bool triggered_ = false;
  std::string held_ws_;
};

// The length of the longest suffix of `text` that is a proper prefix of `marker`.
size_t partial_marker(std::string_view text, std::string_view marker) {
  for (size_t n = std::min(text.size(), marker.size() - 1); n > 0; --n) {
    if (text.substr(text.size() - n) == marker.substr(0, n)) return n;
  }
  return 0;
}

/// Free text, then calls each written as `open` + a JSON object {name, arguments} + `close`
/// (Hermes / Qwen2.5: "<tool_call>\n{...}\n</tool_call>"). Text before the first call is content;
/// whitespace between and after calls is dropped, other text after a call is content too.
/// Llama 3.x: `open` is "{\"name\": \"", the call's own start (kept: the scanner reads it), no
/// close, and the arguments are the "parameters" member.
class MarkedCallParser final : public ToolCallParser {
 public:
  MarkedCallParser(std::string open, std::string close, bool keep_open = false,
                   std::string args_key = "arguments")
      : open_(std::move(open)),
        close_(std::move(close)),
        keep_open_(keep_open),
        args_key_(std::move(args_key)) {}

  void feed(std::string_view text, std::vector<ToolEvent>& out) override {
    buf_.append(text);
    for (bool progress = true; progress && !buf_.empty();) progress = step(out);
  }

  void finish(std::vector<ToolEvent>& out) override {
    if (state_ == State::kText && !buf_.empty()) {
      emit_text(buf_, false, out);
      buf_.clear();
    }
  }

 private:
  enum class State { kText, kCall, kClose };

  // Handles what buf_ holds in the current state; false when it must wait for more text.
  bool step(std::vector<ToolEvent>& out) {
    switch (state_) {
      case State::kText: {
        const size_t at = buf_.find(open_);
        const size_t keep = at == std::string::npos ? partial_marker(buf_, open_) : 0;
        const size_t text_end = at == std::string::npos ? buf_.size() - keep : at;
        emit_text(std::string_view(buf_).substr(0, text_end), at != std::string::npos, out);
        if (at == std::string::npos) {
          buf_.erase(0, text_end);
          return false;
        }
        buf_.erase(0, keep_open_ ? at : at + open_.size());
        scanner_ = std::make_unique<JsonCallScanner>(Layout{"", false, "name", args_key_, ""});
        scanner_->set_base(calls_);
        state_ = State::kCall;
        text_after_call_ = false;
        return true;
      }
      case State::kCall: {
        const size_t used = scanner_->feed_until_done(buf_, out);
        buf_.erase(0, used);
        if (!scanner_->done()) return false;
        calls_ = std::max(calls_ + 1, scanner_->calls_started());
        state_ = State::kClose;
        return true;
      }
      case State::kClose: {
        const size_t start = buf_.find_first_not_of(" \t\r\n");
        if (start == std::string::npos) {
          buf_.clear();
          return false;
        }
        if (buf_.compare(start, close_.size(), close_) == 0) {
          buf_.erase(0, start + close_.size());
          state_ = State::kText;
          return true;
        }
        if (buf_.size() - start < close_.size() &&
            close_.compare(0, buf_.size() - start, buf_, start) == 0) {
          return false;  // the close marker, partly here
        }
        buf_.erase(0, start);  // no close marker: text follows
        state_ = State::kText;
        return true;
      }
    }
    return false;
  }

  // Content text; after a call, whitespace is held until other text follows it (and dropped when
  // a call or the end follows).
  void emit_text(std::string_view text, bool call_follows, std::vector<ToolEvent>& out) {
    if (calls_ == 0) {
      if (!text.empty()) out.push_back({ToolEvent::Kind::kContent, 0, std::string(text)});
      return;
    }
    held_ws_.append(text);
    const size_t last = held_ws_.find_last_not_of(" \t\r\n");
    if (last == std::string::npos) {
      if (call_follows) held_ws_.clear();
      return;
    }
    // Whitespace right after a call is dropped; inside text after it, kept.
    const size_t first = text_after_call_ ? 0 : held_ws_.find_first_not_of(" \t\r\n");
    out.push_back({ToolEvent::Kind::kContent, 0, held_ws_.substr(first, last + 1 - first)});
    text_after_call_ = true;
    held_ws_.erase(0, last + 1);
    if (call_follows) held_ws_.clear();
  }

  std::string open_, close_;
  bool keep_open_;
  std::string args_key_;
  std::string buf_, held_ws_;
  State state_ = State::kText;
  std::unique_ptr<JsonCallScanner> scanner_;
  size_t calls_ = 0;
  bool text_after_call_ = false;
};

}  // namespace

std::unique_ptr<ToolCallParser> make_hermes_parser() {
  return std::make_unique<MarkedCallParser>("<tool_call>", "</tool_call>");
}

std::unique_ptr<ToolCallParser> make_llama3_parser() {
  // The grammar's trigger: free text holding `{"name"` otherwise stays text.
  return std::make_unique<MarkedCallParser>("{\"name\": \"", "", true, "parameters");
}

std::unique_ptr<ToolCallParser> make_envelope_parser(bool json_response) {
  return std::make_unique<EnvelopeParser>(
      Layout{"tool_calls", true, "name", "arguments", "response", json_response});
}

std::unique_ptr<ToolCallParser> make_mistral_nemo_parser(bool triggered) {
  auto calls = std::make_unique<EnvelopeParser>(Layout{"", true, "name", "arguments", "", false});
  if (!triggered) return calls;
  return std::make_unique<TriggeredParser>(std::move(calls));
}

std::unique_ptr<ToolCallParser> make_tool_call_parser(const ToolRequest& r) {
  switch (r.format) {
    case ToolFormat::kHermes:
      return make_hermes_parser();
    case ToolFormat::kLlama3Json:
      return make_llama3_parser();
    case ToolFormat::kMistralNemo:
      return make_mistral_nemo_parser(r.choice == ToolChoice::kAuto);
    case ToolFormat::kEnvelope:
      break;
  }
  return make_envelope_parser(!r.response_schema.is_null());
}

}  // namespace plinth::server
