#define PCRE2_CODE_UNIT_WIDTH 8
#include "tokenizer/pre_tokenizer.hpp"

#include <pcre2.h>

#include <stdexcept>
#include <utility>

namespace plinth {
namespace {

// Unicode White_Space (PropList.txt), the set llama.cpp's unicode-data.cpp marks as whitespace.
#define PLINTH_WS \
  R"(\t-\r \x{85}\x{A0}\x{1680}\x{2000}-\x{200A}\x{2028}\x{2029}\x{202F}\x{205F}\x{3000})"

// GPT-2's split regex (openai/gpt-2 encoder.py), with \s spelled out and (?!\S) as (?![^\s]):
// 's|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)
// llama.cpp's hand-written version of it adds a final `\s+`; that is what the gap rule gives here
// (a lone whitespace character before a non-space becomes its own piece).
constexpr const char* kGpt2 = R"('s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^)" PLINTH_WS
                              R"(\p{L}\p{N}]+|[)" PLINTH_WS R"(]+(?![^)" PLINTH_WS R"(]))";

std::vector<const char*> passes_for(std::string_view name) {
  if (name == "smollm") return {R"(\p{N})", kGpt2};
  if (name == "gpt2") return {kGpt2};
  if (name == "default") {
    return {R"([\p{P}\$\+<=>\^~\|]+)", kGpt2, R"(\p{N}+)", "[0-9][0-9][0-9]"};
  }
  return {};
}

}  // namespace

struct PreTokenizer::Pattern {
  pcre2_code* code = nullptr;
  explicit Pattern(const char* pattern) {
    int err = 0;
    PCRE2_SIZE err_offset = 0;
    code = pcre2_compile(reinterpret_cast<PCRE2_SPTR>(pattern), PCRE2_ZERO_TERMINATED,
                         PCRE2_UTF | PCRE2_UCP, &err, &err_offset, nullptr);
    if (code == nullptr) {
      PCRE2_UCHAR msg[256];
      pcre2_get_error_message(err, msg, sizeof msg);
      throw std::logic_error(std::string("pre-tokenizer regex does not compile at offset ") +
                             std::to_string(err_offset) + ": " + reinterpret_cast<char*>(msg));
    }
    // JIT is an optimisation only: pcre2_match falls back to the interpreter without it.
    pcre2_jit_compile(code, PCRE2_JIT_COMPLETE);
  }
  ~Pattern() { pcre2_code_free(code); }
  Pattern(const Pattern&) = delete;
  Pattern& operator=(const Pattern&) = delete;
};

PreTokenizer::PreTokenizer(std::string_view name) : name_(name) {
  const auto patterns = passes_for(name);
  if (patterns.empty()) {
    std::string list;
    for (const auto& s : supported()) list += (list.empty() ? "" : ", ") + s;
    throw std::runtime_error("tokenizer.ggml.pre: unsupported pre-tokenizer \"" + name_ +
                             "\" (supported: " + list + ")");
  }
  for (const char* p : patterns) passes_.push_back(std::make_shared<const Pattern>(p));
}

std::vector<std::string> PreTokenizer::supported() {
  return {"smollm", "gpt2", "default"};
}

namespace {

[[noreturn]] void throw_match_error(int rc) {
  PCRE2_UCHAR msg[256];
  pcre2_get_error_message(rc, msg, sizeof msg);
  throw std::runtime_error(std::string("pre-tokenizer regex failed: ") +
                           reinterpret_cast<char*>(msg));
}

// The index just past the UTF-8 code point that starts at `pos` (continuation bytes skipped).
size_t next_code_point(std::string_view s, size_t pos) {
  size_t next = pos + 1;
  while (next < s.size() && (static_cast<unsigned char>(s[next]) & 0xC0) == 0x80) ++next;
  return next;
}

// One pass over one piece: appends each match of `code` in `piece` to `out`, and each gap
// between matches (before the first, after the last) as a piece of its own.
void split_piece(const pcre2_code* code, std::string_view piece, pcre2_match_data* md,
                 std::vector<std::string_view>& out) {
  const auto* subject = reinterpret_cast<PCRE2_SPTR>(piece.data());
  size_t done = 0;  // end of the last match: [done, match start) is a gap
  size_t start = 0;
  while (start < piece.size()) {
    // The subject is the piece alone, so lookaheads end at the piece boundary as in llama.cpp.
    const int rc = pcre2_match(code, subject, piece.size(), start, PCRE2_NO_UTF_CHECK, md, nullptr);
    if (rc == PCRE2_ERROR_NOMATCH) break;
    if (rc < 0) throw_match_error(rc);
    const PCRE2_SIZE* ov = pcre2_get_ovector_pointer(md);
    const size_t m_begin = ov[0], m_end = ov[1];
    if (m_end == m_begin) {  // no pattern here matches empty; guard against looping anyway
      start = next_code_point(piece, m_end);
      continue;
    }
    if (m_begin > done) out.push_back(piece.substr(done, m_begin - done));
    out.push_back(piece.substr(m_begin, m_end - m_begin));
    done = start = m_end;
  }
  if (done < piece.size()) out.push_back(piece.substr(done));
}

}  // namespace

std::vector<std::string_view> PreTokenizer::split(std::string_view text) const {
  std::vector<std::string_view> pieces;
  if (text.empty()) return pieces;
  pieces.push_back(text);
  std::unique_ptr<pcre2_match_data, decltype(&pcre2_match_data_free)> md(
      pcre2_match_data_create(1, nullptr), &pcre2_match_data_free);
  if (!md) throw std::bad_alloc();
  std::vector<std::string_view> next;
  for (const auto& pass : passes_) {
    next.clear();
    next.reserve(pieces.size() * 2);
    for (const std::string_view piece : pieces) split_piece(pass->code, piece, md.get(), next);
    std::swap(pieces, next);
  }
  return pieces;
}

}  // namespace plinth
