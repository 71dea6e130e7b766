#define PCRE2_CODE_UNIT_WIDTH 8
#include "tokenizer/pre_tokenizer.hpp"

#include <pcre2.h>

#include <stdexcept>
#include <string>
#include <utility>

namespace plinth {
namespace {

// Unicode White_Space (PropList.txt), the set llama.cpp's unicode-data.cpp marks as whitespace;
// `\s` and `\S` in the table below stand for it.
constexpr std::string_view kWhiteSpace =
    R"(\t-\r \x{85}\x{A0}\x{1680}\x{2000}-\x{200A}\x{2028}\x{2029}\x{202F}\x{205F}\x{3000})";

// `\s` / `\S` of `pattern` spelled out with kWhiteSpace: outside a class `[WS]` / `[^WS]`, inside
// a class the ranges themselves (`\S` inside a class does not occur in the table).
std::string expand_whitespace(std::string_view pattern) {
  std::string out;
  bool in_class = false;
  for (size_t i = 0; i < pattern.size(); ++i) {
    const char c = pattern[i];
    if (c == '\\' && i + 1 < pattern.size()) {
      const char e = pattern[++i];
      if (e == 's') {
        out += in_class ? std::string(kWhiteSpace) : "[" + std::string(kWhiteSpace) + "]";
      } else if (e == 'S' && !in_class) {
        out += "[^" + std::string(kWhiteSpace) + "]";
      } else {
        out += c;
        out += e;
      }
      continue;
    }
    if (c == '[' && !in_class) {
      in_class = true;
      out += c;
      // A ']' right after '[' or '[^' is a literal inside the class.
      if (i + 1 < pattern.size() && pattern[i + 1] == '^') out += pattern[++i];
      if (i + 1 < pattern.size() && pattern[i + 1] == ']') out += pattern[++i];
      continue;
    }
    if (c == ']' && in_class) in_class = false;
    out += c;
  }
  return out;
}

// The contraction alternatives of the (?i:'s|'t|'re|'ve|'m|'ll|'d) group, as llama.cpp spells
// them (ASCII case-insensitive).
#define PLINTH_CONTRACTIONS "(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])"

// GPT-2's split regex (openai/gpt-2 encoder.py). llama.cpp's hand-written version of it adds a
// final `\s+`; that is what the gap rule gives here (a lone whitespace character before a
// non-space becomes its own piece).
#define PLINTH_GPT2 "'s|'t|'re|'ve|'m|'ll|'d| ?\\p{L}+| ?\\p{N}+| ?[^\\s\\p{L}\\p{N}]+|\\s+(?!\\S)"
// Llama 3's (tiktoken cl100k) split regex; \p{N}{1,3} -> \p{N} is Qwen2's.
#define PLINTH_LLAMA3_DIGITS(digits)                           \
  PLINTH_CONTRACTIONS "|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|" digits \
                      "| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+"
// GPT-4o (o200k) / tekken letter classes, as in tokenizer.json (PCRE2 has \p{Lu} etc.).
#define PLINTH_UPPER "[\\p{Lu}\\p{Lt}\\p{Lm}\\p{Lo}\\p{M}]"
#define PLINTH_LOWER "[\\p{Ll}\\p{Lm}\\p{Lo}\\p{M}]"

// One family of `tokenizer.ggml.pre` names: the llama.cpp LLAMA_VOCAB_PRE_TYPE_* they map to,
// its regex passes (llm_tokenizer_bpe) and the flags llama.cpp sets with it.
struct PreSpec {
  std::vector<std::string_view> names;
  std::vector<const char*> passes;  // empty: recognised but not implemented (see `why_not`)
  bool ignore_merges = false;
  bool add_bos = false;
  const char* why_not = nullptr;
};

const std::vector<PreSpec>& specs() {
  static const std::vector<PreSpec> table = {
      {{"default"}, {"[\\p{P}\\$\\+<=>\\^~\\|]+", PLINTH_GPT2, "\\p{N}+", "[0-9][0-9][0-9]"}},
      // LLAMA3
      {{"llama3", "llama-v3", "llama-bpe", "falcon3", "falcon-h1", "pixtral", "midm-2.0", "lfm2",
        "jina-v5-nano"},
       {PLINTH_LLAMA3_DIGITS("\\p{N}{1,3}")},
       true,
       true},
      // JAIS2: llama3 with a cascade of whitespace runs
      {{"jais-2"},
       {PLINTH_CONTRACTIONS
        "|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|"
        "\\s{512}(?!\\S)|\\s{256}(?!\\S)|\\s{128}(?!\\S)|\\s{64}(?!\\S)|\\s{32}(?!\\S)|"
        "\\s{16}(?!\\S)|\\s{8}(?!\\S)|\\s{4}(?!\\S)|\\s{1,2}(?!\\S)|\\s{1}"}},
      // DBRX, SMAUG, CHATGLM4: the llama3 regex without its flags
      {{"dbrx", "smaug-bpe", "chatglm-bpe"}, {PLINTH_LLAMA3_DIGITS("\\p{N}{1,3}")}},
      {{"glm4", "glm5"}, {PLINTH_LLAMA3_DIGITS("\\p{N}{1,3}")}, true},
      {{"deepseek-llm"},
       {"[\r\n]",
        "\\s?[A-Za-z\\x{B5}\\x{C0}-\\x{D6}\\x{D8}-\\x{F6}\\x{F8}-\\x{1BA}\\x{1BC}-\\x{1BF}\\x{1C4}-"
        "\\x{293}\\x{295}-\\x{2AF}\\x{370}-\\x{373}\\x{376}\\x{377}\\x{37B}-\\x{37D}\\x{37F}\\x{"
        "386}\\x{388}-\\x{38A}\\x{38C}\\x{38E}-\\x{3A1}\\x{3A3}-\\x{3F5}\\x{3F7}-\\x{481}\\x{48A}-"
        "\\x{52F}\\x{531}-\\x{556}\\x{10A0}-\\x{10C5}\\x{13A0}-\\x{13F5}\\x{13F8}-\\x{13FD}\\x{"
        "1C90}-\\x{1CBA}\\x{1CBD}-\\x{1CBF}\\x{1D00}-\\x{1D2B}\\x{1D6B}-\\x{1D77}\\x{1D79}-\\x{"
        "1D9A}\\x{1E00}-\\x{1F15}\\x{1F18}-\\x{1F1D}\\x{1F20}-\\x{1F45}\\x{1F48}-\\x{1F4D}\\x{1F50}"
        "-\\x{1F57}\\x{1F59}\\x{1F5B}\\x{1F5D}\\x{1F5F}-\\x{1F7D}\\x{1F80}-\\x{1FB4}\\x{1FB6}-\\x{"
        "1FBC}\\x{1FBE}\\x{1FC2}-\\x{1FC4}\\x{1FC6}-\\x{1FCC}\\x{1FD0}-\\x{1FD3}\\x{1FD6}-\\x{1FDB}"
        "\\x{1FE0}-\\x{1FEC}\\x{1FF2}-\\x{1FF4}\\x{1FF6}-\\x{1FFC}\\x{2102}\\x{2107}\\x{210A}-\\x{"
        "2113}\\x{2115}\\x{2119}-\\x{211D}\\x{2124}\\x{2126}\\x{2128}\\x{212A}-\\x{212D}\\x{212F}-"
        "\\x{2134}\\x{2139}\\x{213C}-\\x{213F}\\x{2145}-\\x{2149}\\x{214E}\\x{2183}\\x{2184}\\x{"
        "2C00}-\\x{2C7B}\\x{2C7E}-\\x{2CE4}\\x{2CEB}-\\x{2CEE}\\x{2CF2}\\x{2CF3}\\x{A640}-\\x{A66D}"
        "\\x{A680}-\\x{A69B}\\x{A722}-\\x{A76F}\\x{A771}-\\x{A787}\\x{A78B}-\\x{A78E}\\x{AB70}-\\x{"
        "ABBF}\\x{FB00}-\\x{FB06}\\x{FB13}-\\x{FB17}\\x{FF21}-\\x{FF3A}\\x{FF41}-\\x{FF5A}\\x{"
        "10400}-\\x{1044F}\\x{104B0}-\\x{104D3}\\x{104D8}-\\x{104FB}\\x{10C80}-\\x{10CB2}\\x{10CC0}"
        "-\\x{10CF2}\\x{118A0}-\\x{118DF}\\x{1E900}-\\x{1E943}]+",
        "\\s?[!-/:-~\\x{FF01}-\\x{FF0F}\\x{FF1A}-\\x{FF5E}\\x{2018}-\\x{201F}\\x{3000}-\\x{3002}]+",
        "\\s+$", "[\\x{4E00}-\\x{9FA5}\\x{800}-\\x{4E00}\\x{AC00}-\\x{D7FF}]+", "\\p{N}+"}},
      // DEEPSEEK3_LLM, HUNYUAN_DENSE, JOYAI_LLM, HY_V4
      {{"deepseek-v3", "hunyuan-dense", "joyai-llm", "hy_v4"},
       {"\\p{N}{1,3}", "[\\x{4E00}-\\x{9FA5}\\x{3040}-\\x{309F}\\x{30A0}-\\x{30FF}]+",
        "[!\"#$%&'()*+,\\-./:;<=>?@\\[\\\\\\]^_`{|}~][A-Za-z]+|[^\r\n\\p{L}\\p{P}\\p{S}]?[\\p{L}"
        "\\p{M}]+| ?[\\p{P}\\p{S}]+[\r\n]*|\\s*[\r\n]+|\\s+(?!\\S)|\\s+"}},
      {{"spark2_5"},
       {"\\p{N}{1,3}", "[\\x{4E00}-\\x{9FA5}\\x{3040}-\\x{309F}\\x{30A0}-\\x{30FF}]+",
        "[!\"#$%&'()*+,\\-./:;<=>?@\\[\\\\\\]^_`{|}~][A-Za-z]+|[^\r\n\\p{L}\\p{P}\\p{S}]?[\\p{L}"
        "\\p{M}]+| ?[\\p{P}\\p{S}]+|[\r\n]|\\s+(?!\\S)|\\s+",
        "\\p{N}"}},
      {{"youtu"},
       {"[\\x{AC00}-\\x{D7A3}\\x{3131}-\\x{318E}]+|[\\x{FF01}\\x{2026}\\x{201C}\\x{201D}\\x{2018}"
        "\\x{2019}\\x{2014}\\x{FF1A}\\x{FF1B}\\x{FF0C}\\x{3001}-\\x{303F}\\x{FE30}-\\x{FE4F}]+|["
        "\\x{3105}-\\x{312F}]+|[\\x{4E00}-\\x{9FA5}\\x{3040}-\\x{309F}\\x{30A0}-\\x{30FF}]+",
        "[^\\r\\n\\p{L}\\p{N}]?[\\p{Lu}\\p{Lt}\\p{Lm}\\p{Lo}\\p{M}]*[\\p{Ll}\\p{Lm}\\p{Lo}\\p{M}]+"
        "(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])?|[^\\r\\n\\p{L}\\p{N}]?[\\p{Lu}"
        "\\p{Lt}\\p{Lm}\\p{Lo}\\p{M}]+[\\p{Ll}\\p{Lm}\\p{Lo}\\p{M}]*(?:'[sS]|'[tT]|'[rR][eE]|'[vV]"
        "[eE]|'[mM]|'[lL][lL]|'[dD])?|\\p{N}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n/]*|\\s*[\\r\\n]+|\\s+(?!"
        "\\S)|\\s+"},
       true},
      {{"deepseek-coder"},
       {"[\r\n]", "\\s?\\p{L}+", "\\s?\\p{P}+",
        "[\\x{4E00}-\\x{9FA5}\\x{800}-\\x{4E00}\\x{AC00}-\\x{D7FF}]+", "\\p{N}"}},
      {{"falcon"}, {"[\\p{P}\\$\\+<=>\\^~\\|`]+", PLINTH_GPT2, "[0-9][0-9][0-9]"}},
      // STARCODER, REFACT, COMMAND_R, SMOLLM, CODESHELL, EXAONE, MINERVA, MELLUM2
      {{"starcoder", "refact", "command-r", "smollm", "codeshell", "exaone", "minerva-7b",
        "mellum2"},
       {"\\p{N}", PLINTH_GPT2}},
      // GPT2, MPT, OLMO, JAIS, TRILLION, GRANITE_DOCLING
      {{"gpt-2", "phi-2", "jina-es", "jina-de", "gigachat", "jina-v2-es", "jina-v2-de", "a.x-4.0",
        "mellum", "modern-bert", "jina-v1-en", "jina-v2-code", "roberta-bpe", "exaone4", "mpt",
        "olmo", "jais", "trillion", "granite-docling"},
       {PLINTH_GPT2}},
      // STABLELM2, QWEN2, HUNYUAN, SOLAR_OPEN, GROK_2
      {{"stablelm2", "qwen2", "deepseek-r1-qwen", "kormo", "f2llmv2", "megrez", "hunyuan",
        "solar-open", "grok-2"},
       {PLINTH_LLAMA3_DIGITS("\\p{N}")}},
      {{"qwen35"},
       {PLINTH_CONTRACTIONS
        "|[^\\r\\n\\p{L}\\p{N}]?[\\p{L}\\p{M}]+|\\p{N}| ?[^\\s\\p{L}\\p{M}\\p{N}]+[\\r\\n]*|\\s*["
        "\\r\\n]+|\\s+(?!\\S)|\\s+"}},
      // PORO, BLOOM, GPT3_FINNISH
      {{"poro-chat", "bloom", "gpt3-finnish"},
       {" ?[^(\\s|.,!?\\x{2026}\\x{3002}\\x{FF0C}\\x{3001}\\x{964}\\x{6D4}\\x{60C})]+"}},
      {{"viking"},
       {" ?[^(\\s|.,!?\\x{2026}\\x{3002}\\x{FF0C}\\x{3001}\\x{964}\\x{6D4}\\x{60C})]+", "\\p{N}"}},
      {{"tekken"},
       {"[^\\r\\n\\p{L}\\p{N}]?" PLINTH_UPPER "*" PLINTH_LOWER
        "+|[^\\r\\n\\p{L}\\p{N}]?" PLINTH_UPPER "+" PLINTH_LOWER
        "*|\\p{N}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n/]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+"},
       true,
       true},
      {{"chameleon"},
       {"<sentinel:[0-9]+>", "(IMGIMG)((A|B|C|D|E|F|G|H|I){1,4})Z", "([\\t\\n]|    |  )", "\\p{N}",
        "[\\p{P}!-/:-@\\[-`{-~]", PLINTH_GPT2},
       false,
       true},
      // GPT4O, MINIMAX_M2
      {{"gpt-4o", "llama4", "kanana2", "talkie", "minimax-m2"},
       {"[^\\r\\n\\p{L}\\p{N}]?" PLINTH_UPPER "*" PLINTH_LOWER "+" PLINTH_CONTRACTIONS
        "?|[^\\r\\n\\p{L}\\p{N}]?" PLINTH_UPPER "+" PLINTH_LOWER "*" PLINTH_CONTRACTIONS
        "?|\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n/]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+"}},
      {{"granite-embed-multi-97m"},
       {"[^\\r\\n\\p{L}\\p{N}]?((?=[\\p{L}\\p{M}])([^a-z]))*((?=[\\p{L}\\p{M}])([^A-Z]))+"
        "(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])?|[^\\r\\n\\p{L}\\p{N}]?((?=["
        "\\p{L}\\p{M}])([^a-z]))+((?=[\\p{L}\\p{M}])([^A-Z]))*(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]"
        "|'[mM]|'[lL][lL]|'[dD])?|\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n/]*|\\s*[\\r\\n]+|\\s+"
        "(?!\\S)|\\s+"},
       true},
      {{"tiny_aya", "cohere2moe"},
       {"\\d{1,3}(?=(?:\\d{3})*\\b)",
        "[^\\r\\n\\p{L}\\p{N}]?" PLINTH_UPPER "*" PLINTH_LOWER "+" PLINTH_CONTRACTIONS
        "?|[^\\r\\n\\p{L}\\p{N}]?" PLINTH_UPPER "+" PLINTH_LOWER "*" PLINTH_CONTRACTIONS
        "?|\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n/]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+"}},
      {{"bailingmoe", "bailingmoe2", "llada-moe"},
       {"'(?:[sSdDmMtT]|[lL][lL]|[vV][eE]|[rR][eE])|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}| ?[^\\s"
        "\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]|\\s+(?!\\S)|\\s+"}},
      {{"seed-coder"},
       {PLINTH_CONTRACTIONS
        "|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}{1}| ?[^\\s\\p{L}\\p{N}\\r\\n]+|\\s*[\\r\\n]+|\\s+(?!"
        "\\S)|\\s+"}},
      {{"ufakzeka"},
       {"[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!"
        "\\S)|\\s+"}},
      {{"laguna"}, {"[^\\n]+|[\\n]+", PLINTH_LLAMA3_DIGITS("\\p{N}")}},
      {{"exaone-moe"},
       {PLINTH_CONTRACTIONS
        "|[^\\r\\n\\p{L}\\p{N}]?(?:\\p{L}\\p{M}*(?: \\p{L}\\p{M}*)*)+|\\p{N}| ?[^\\s\\p{L}\\p{N}]+["
        "\\r\\n/]?|\\s*[\\r\\n]|\\s+(?!\\S)|\\s+"}},
      {{"minicpm5"}, {"\\p{N}{1,3}", PLINTH_LLAMA3_DIGITS("\\p{N}+")}, true},
      // Known to llama.cpp, not implemented here.
      {{"kimi-k2", "afmoe", "superbpe"},
       {},
       false,
       false,
       "llama.cpp splits it with its own code (src/unicode.cpp), not a regex list"},
      {{"gemma4", "granite-embed-multi-311m", "sarvam-moe", "whitespace"},
       {},
       false,
       false,
       "it is not byte-level BPE (llama.cpp runs it on raw UTF-8 with <0xXX> byte tokens)"},
  };
  return table;
}

const PreSpec* find_spec(std::string_view name) {
  for (const PreSpec& s : specs()) {
    for (const std::string_view n : s.names) {
      if (n == name) return &s;
    }
  }
  return nullptr;
}

}  // namespace

struct PreTokenizer::Pattern {
  pcre2_code* code = nullptr;
  explicit Pattern(const std::string& pattern) {
    int err = 0;
    PCRE2_SIZE err_offset = 0;
    // DOLLAR_ENDONLY: `$` is the end of the piece only, as in std::regex (llama.cpp).
    code = pcre2_compile(reinterpret_cast<PCRE2_SPTR>(pattern.data()), pattern.size(),
                         PCRE2_UTF | PCRE2_UCP | PCRE2_DOLLAR_ENDONLY, &err, &err_offset, nullptr);
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
  const PreSpec* spec = find_spec(name);
  if (spec == nullptr) {
    std::string list;
    for (const auto& s : supported()) list += (list.empty() ? "" : ", ") + s;
    throw std::runtime_error("tokenizer.ggml.pre: unknown pre-tokenizer \"" + name_ +
                             "\" (known: " + list + ")");
  }
  if (spec->passes.empty()) {
    throw std::runtime_error("tokenizer.ggml.pre: pre-tokenizer \"" + name_ +
                             "\" is not supported by plinth: " + spec->why_not);
  }
  for (const char* p : spec->passes) {
    passes_.push_back(std::make_shared<const Pattern>(expand_whitespace(p)));
  }
  ignore_merges_ = spec->ignore_merges;
  default_add_bos_ = spec->add_bos;
}

std::vector<std::string> PreTokenizer::supported() {
  std::vector<std::string> out;
  for (const PreSpec& s : specs()) {
    if (s.passes.empty()) continue;
    for (const std::string_view n : s.names) out.emplace_back(n);
  }
  return out;
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
