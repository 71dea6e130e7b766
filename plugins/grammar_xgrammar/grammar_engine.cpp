#include "grammar_engine.hpp"

#include <xgrammar/xgrammar.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <thread>
#include <variant>

#include "json_string_classes.hpp"
#include "schema_rewrite.hpp"
#include "schema_subset.hpp"

namespace plinth::grammar {
namespace {

using ordered_json = nlohmann::ordered_json;

/// XGrammar's exception text without its logging prefix, "[HH:MM:SS] /its/source/file.cc:LINE: ",
/// and the trailing newline: what a client reads in its 400 names the mistake, not the server's
/// build paths.
std::string engine_message(std::string_view what) {
  if (what.starts_with('[')) {
    const size_t close = what.find("] ");
    const size_t colon = close == std::string_view::npos ? close : what.find(": ", close + 2);
    if (colon != std::string_view::npos) {
      const std::string_view where = what.substr(close + 2, colon - close - 2);  // FILE:LINE
      const size_t line_at = where.rfind(':');
      const bool is_line = line_at != std::string_view::npos && line_at + 1 < where.size() &&
                           std::all_of(where.begin() + static_cast<std::ptrdiff_t>(line_at) + 1,
                                       where.end(), [](char c) { return c >= '0' && c <= '9'; });
      if (is_line) what.remove_prefix(colon + 2);
    }
  }
  while (!what.empty() && (what.back() == '\n' || what.back() == '\r' || what.back() == ' ')) {
    what.remove_suffix(1);
  }
  return std::string(what);
}

/// GGUF token types that are never text: control, unknown, unused.
bool never_text(int32_t type) {
  return type == 2 || type == 3 || type == 5;
}

/// An EBNF string literal holding `s` exactly.
std::string ebnf_literal(std::string_view s) {
  std::string out = "\"";
  for (unsigned char c : s) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += static_cast<char>(c);
    } else if (c == '\n') {
      out += "\\n";
    } else if (c == '\r') {
      out += "\\r";
    } else if (c == '\t') {
      out += "\\t";
    } else if (c < 0x20) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\x%02x", c);
      out += buf;
    } else {
      out += static_cast<char>(c);
    }
  }
  return out + "\"";
}

ordered_json parse_json(std::string_view spec, const char* what) {
  try {
    return ordered_json::parse(spec);
  } catch (const nlohmann::json::exception& e) {
    throw CompileError("", std::string(what) + " is not valid JSON: " + e.what());
  }
}

std::string choice_grammar(std::string_view spec) {
  const ordered_json choices = parse_json(spec, "the choice list");
  if (!choices.is_array() || choices.empty()) {
    throw CompileError("", "choice must be a non-empty array of strings");
  }
  std::string ebnf = "root ::= ";
  for (size_t i = 0; i < choices.size(); ++i) {
    if (!choices[i].is_string() || choices[i].get<std::string>().empty()) {
      throw CompileError("/" + std::to_string(i), "each choice must be a non-empty string");
    }
    if (i > 0) ebnf += " | ";
    ebnf += ebnf_literal(choices[i].get<std::string>());
  }
  return ebnf + "\n";
}

xgrammar::TokenizerInfo make_info(const Vocabulary& v) {
  if (v.bytes.empty()) throw std::invalid_argument("grammar: the vocabulary is empty");
  if (!v.types.empty() && v.types.size() != v.bytes.size()) {
    throw std::invalid_argument("grammar: token types and tokens differ in count");
  }
  const auto n = static_cast<int32_t>(v.bytes.size());
  for (int32_t id : v.stop_ids) {
    if (id < 0 || id >= n) {
      throw std::invalid_argument("grammar: stop id " + std::to_string(id) +
                                  " is outside the vocabulary");
    }
  }
  std::vector<std::string> encoded(v.bytes.size());
  for (size_t i = 0; i < v.bytes.size(); ++i) {
    const bool stop = std::find(v.stop_ids.begin(), v.stop_ids.end(), static_cast<int32_t>(i)) !=
                      v.stop_ids.end();
    // An empty entry is XGrammar's "special token": never allowed by a grammar.
    if (!stop && !v.types.empty() && never_text(v.types[i])) continue;
    encoded[i] = v.bytes[i];
  }
  return xgrammar::TokenizerInfo(encoded, xgrammar::VocabType::RAW, n, v.stop_ids, false);
}

// The JSON Schemas of a structural tag ({"type": "json_schema", "json_schema": ...} anywhere
// in it) rewritten and held to the subset exactly as the JSON Schema kind's (prepare_json_schema,
// so e.g. a pattern's `.` excludes line terminators here too), and their style to plain JSON (the
// other styles encode values in ways the subset check does not cover); `ptr` is the JSON pointer
// of `v`, which is rewritten in place.
void prepare_structural_schemas(ordered_json& v, const std::string& ptr) {
  if (v.is_array()) {
    for (size_t i = 0; i < v.size(); ++i) {
      prepare_structural_schemas(v[i], ptr + "/" + std::to_string(i));
    }
    return;
  }
  if (!v.is_object()) return;
  if (v.contains("type") && v["type"] == "json_schema" && v.contains("json_schema")) {
    if (v.contains("style") && v["style"] != "json") {
      throw CompileError(ptr + "/style", "only the \"json\" style of json_schema is supported");
    }
    try {
      v["json_schema"] = ordered_json::parse(prepare_json_schema(v["json_schema"].dump(), false));
    } catch (const CompileError& e) {
      throw CompileError(ptr + "/json_schema" + e.pointer(), e.reason());
    }
    return;
  }
  for (auto& [key, value] : v.items()) prepare_structural_schemas(value, ptr + "/" + key);
}

xgrammar::CompiledGrammar compile_structural_tag(xgrammar::GrammarCompiler& compiler,
                                                 const xgrammar::TokenizerInfo& info,
                                                 std::string_view spec) {
  ordered_json tag = parse_json(spec, "the structural tag");
  prepare_structural_schemas(tag, "");
  auto grammar = xgrammar::Grammar::FromStructuralTag(tag.dump(), info);
  if (const auto* error = std::get_if<xgrammar::StructuralTagError>(&grammar)) {
    throw CompileError("",
                       std::string("the structural tag was refused: ") +
                           std::visit([](const auto& e) { return std::string(e.what()); }, *error));
  }
  // The same string-class corrections as for the JSON Schema kind (json_string_classes.hpp).
  return compiler.CompileGrammar(
      json_string_classes(std::get<xgrammar::Grammar>(grammar).ToString()), "root");
}

/// XGrammar's grammar for a JSON Schema, its string classes corrected (json_string_classes.hpp),
/// compiled.
xgrammar::CompiledGrammar compile_json_schema(
    xgrammar::GrammarCompiler& compiler, const std::string& schema, bool any_ws,
    const std::optional<std::pair<std::string, std::string>>& seps, bool strict,
    std::optional<int> max_ws) {
  const xgrammar::Grammar grammar =
      xgrammar::Grammar::FromJSONSchema(schema, any_ws, std::nullopt, seps, strict, max_ws);
  return compiler.CompileGrammar(json_string_classes(grammar.ToString()), "root");
}

}  // namespace

std::string prepare_json_schema(std::string_view spec, bool strict) {
  ordered_json schema = ordered_json::parse(spec, nullptr, false);
  if (schema.is_discarded()) throw CompileError("", "the schema is not valid JSON");
  SchemaRefusal why;
  if (!rewrite_schema(schema, strict, why)) throw CompileError(why.pointer, why.message);
  std::string rewritten = schema.dump();
  if (!check_schema_subset(nlohmann::json::parse(rewritten), why)) {
    throw CompileError(why.pointer, why.message);
  }
  return rewritten;
}

Compiled::~Compiled() = default;

Engine::Engine(const Vocabulary& vocab, const EngineConfig& config)
    : vocab_size_(static_cast<int32_t>(vocab.bytes.size())),
      info_(std::make_unique<xgrammar::TokenizerInfo>(make_info(vocab))),
      // XGrammar splits max_memory_bytes: a third for the rule-level cache, two thirds for its
      // own cache of whole compiled grammars (off with lazy masks and a limit; with eager masks
      // it holds what this engine's LRU holds, sharing the same objects).
      compiler_(std::make_unique<xgrammar::GrammarCompiler>(
          *info_, std::max(1, config.compile_threads), config.mask_cache_bytes != 0,
          config.mask_cache_bytes != 0 ? static_cast<int64_t>(config.mask_cache_bytes) * 3 : -1,
          config.lazy_masks)) {}

Engine::~Engine() {
  // Compilations abandoned by their callers still use the compiler: wait for them.
  std::unique_lock lock(mu_);
  idle_.wait(lock, [&] { return running_ == 0; });
}

std::shared_ptr<const Compiled> Engine::compile(SpecKind kind, std::string_view spec,
                                                const CompileOptions& options) {
  const size_t limit = options.max_spec_bytes != 0 ? options.max_spec_bytes : kDefaultMaxSpecBytes;
  std::string key;
  try {
    if (spec.size() > limit) {
      throw CompileError("", "the spec is " + std::to_string(spec.size()) +
                                 " bytes, more than the limit of " + std::to_string(limit));
    }
    // Key: kind, options, and the spec with JSON whitespace normalized (member order kept: it
    // is the order the output follows).
    key = std::to_string(static_cast<int>(kind)) + "|" + (options.compact ? "c" : "b") +
          std::to_string(options.max_whitespace) + "|" + (options.strict ? "s" : "n") + "|";
    if (kind == SpecKind::kJsonSchema || kind == SpecKind::kChoice ||
        kind == SpecKind::kStructuralTag) {
      key += parse_json(spec, kind == SpecKind::kChoice          ? "the choice list"
                              : kind == SpecKind::kStructuralTag ? "the structural tag"
                                                                 : "the schema")
                 .dump();
    } else if (kind != SpecKind::kJsonObject) {
      key += spec;
    }
  } catch (const CompileError&) {
    std::lock_guard lock(mu_);
    ++stats_.refused;
    throw;
  }
  {
    std::lock_guard lock(mu_);
    auto it = index_.find(key);
    if (it != index_.end()) {
      lru_.splice(lru_.begin(), lru_, it->second);
      ++stats_.cache_hits;
      return it->second->second;
    }
  }
  return options.timeout_ms == 0 ? compile_and_cache(key, kind, std::string(spec), options)
                                 : compile_with_timeout(key, kind, std::string(spec), options);
}

std::shared_ptr<const Compiled> Engine::compile_and_cache(const std::string& key, SpecKind kind,
                                                          const std::string& spec,
                                                          const CompileOptions& options) {
  std::shared_ptr<const Compiled> compiled;
  try {
    compiled = compile_uncached(kind, spec, options);
  } catch (const CompileError&) {
    std::lock_guard lock(mu_);
    ++stats_.refused;
    throw;
  }
  std::lock_guard lock(mu_);
  ++stats_.compiles;
  if (index_.count(key) == 0) {
    lru_.emplace_front(key, compiled);
    index_[key] = lru_.begin();
    if (lru_.size() > kCacheEntries) {
      index_.erase(lru_.back().first);
      lru_.pop_back();
    }
  }
  return compiled;
}

std::shared_ptr<const Compiled> Engine::compile_with_timeout(const std::string& key, SpecKind kind,
                                                             std::string spec,
                                                             const CompileOptions& options) {
  {
    std::lock_guard lock(mu_);
    if (abandoned_ >= kMaxBackgroundCompiles) {
      ++stats_.refused;
      throw CompileError("", "the grammar engine is still busy with " + std::to_string(abandoned_) +
                                 " compilations that ran past their time limit; retry later");
    }
    ++running_;
  }
  struct Shared {
    std::mutex mu;
    std::condition_variable done;
    bool finished = false, abandoned = false;
    std::shared_ptr<const Compiled> result;
    std::exception_ptr error;
  };
  auto shared = std::make_shared<Shared>();
  std::thread([this, shared, key, kind, spec = std::move(spec), options] {
    std::shared_ptr<const Compiled> r;
    std::exception_ptr e;
    try {
      r = compile_and_cache(key, kind, spec, options);
    } catch (...) {
      e = std::current_exception();
    }
    bool abandoned = false;
    {
      std::lock_guard lock(shared->mu);
      shared->result = std::move(r);
      shared->error = e;
      shared->finished = true;
      abandoned = shared->abandoned;
      shared->done.notify_all();
    }
    std::lock_guard lock(mu_);
    --running_;
    if (abandoned) --abandoned_;
    idle_.notify_all();
  }).detach();
  std::unique_lock lock(shared->mu);
  if (!shared->done.wait_for(lock, std::chrono::milliseconds(options.timeout_ms),
                             [&] { return shared->finished; })) {
    shared->abandoned = true;
    lock.unlock();
    std::lock_guard engine_lock(mu_);
    ++abandoned_;
    ++stats_.refused;
    throw CompileError("", "compiling it took longer than the limit of " +
                               std::to_string(options.timeout_ms) + " ms; simplify the constraint");
  }
  if (shared->error) std::rethrow_exception(shared->error);
  return shared->result;
}

std::shared_ptr<const Compiled> Engine::compile_uncached(SpecKind kind, std::string_view spec,
                                                         const CompileOptions& options) {
  const bool any_ws = !options.compact;
  const std::optional<int> max_ws =
      any_ws ? std::optional<int>(static_cast<int>(std::max(1u, options.max_whitespace)))
             : std::nullopt;
  const std::optional<std::pair<std::string, std::string>> seps =
      options.compact ? std::optional<std::pair<std::string, std::string>>({",", ":"})
                      : std::nullopt;
  auto out = std::make_shared<Compiled>();
  try {
    switch (kind) {
      case SpecKind::kJsonSchema: {
        const std::string rewritten = prepare_json_schema(spec, options.strict);
        out->grammar = std::make_unique<xgrammar::CompiledGrammar>(
            compile_json_schema(*compiler_, rewritten, any_ws, seps, options.strict, max_ws));
        break;
      }
      case SpecKind::kJsonObject:
        out->grammar = std::make_unique<xgrammar::CompiledGrammar>(
            compile_json_schema(*compiler_, R"({"type": "object"})", any_ws, seps, false, max_ws));
        break;
      case SpecKind::kRegex:
        // ECMAScript's '.' (no line terminators), not XGrammar's (any character).
        out->grammar = std::make_unique<xgrammar::CompiledGrammar>(
            compiler_->CompileRegex(ecmascript_dots(std::string(spec))));
        break;
      case SpecKind::kChoice:
        out->grammar = std::make_unique<xgrammar::CompiledGrammar>(
            compiler_->CompileGrammar(choice_grammar(spec), "root"));
        break;
      case SpecKind::kEbnf:
        out->grammar = std::make_unique<xgrammar::CompiledGrammar>(
            compiler_->CompileGrammar(std::string(spec), "root"));
        break;
      case SpecKind::kStructuralTag:
        out->grammar = std::make_unique<xgrammar::CompiledGrammar>(
            compile_structural_tag(*compiler_, *info_, spec));
        break;
      default:
        throw CompileError("", "unknown grammar kind " + std::to_string(static_cast<int>(kind)));
    }
  } catch (const CompileError&) {
    throw;
  } catch (const std::exception& e) {
    throw CompileError("", "the grammar engine refused it: " + engine_message(e.what()));
  }
  // An unsatisfiable constraint (enum of values outside its type, contradictory bounds) leaves
  // nothing to generate: refuse it now rather than fail the sequence at its first token.
  Matcher probe(out);
  std::vector<uint32_t> row((static_cast<size_t>(vocab_size_) + 31) / 32);
  probe.fill(row.data(), static_cast<uint32_t>(row.size()), vocab_size_);
  if (std::all_of(row.begin(), row.end(), [](uint32_t w) { return w == 0; })) {
    throw CompileError("", "no output can satisfy it (the constraint is unsatisfiable)");
  }
  return out;
}

bool Engine::wait_idle(uint32_t ms) {
  std::unique_lock lock(mu_);
  return idle_.wait_for(lock, std::chrono::milliseconds(ms), [&] { return running_ == 0; });
}

EngineStats Engine::stats() const {
  std::lock_guard lock(mu_);
  return stats_;
}

Matcher::Matcher(std::shared_ptr<const Compiled> grammar)
    : grammar_(std::move(grammar)),
      m_(std::make_unique<xgrammar::GrammarMatcher>(*grammar_->grammar)) {}

Matcher::~Matcher() = default;

void Matcher::fill(uint32_t* row, uint32_t words, int32_t vocab_size) {
  const int32_t need = xgrammar::GetBitmaskSize(vocab_size);
  std::fill(row, row + words, 0u);
  if (m_->IsTerminated()) return;
  int64_t shape[1] = {need};
  DLTensor t{};
  t.data = row;
  t.device = DLDevice{kDLCPU, 0};
  t.ndim = 1;
  t.dtype = xgrammar::GetBitmaskDLType();
  t.shape = shape;
  t.strides = nullptr;
  t.byte_offset = 0;
  m_->FillNextTokenBitmask(&t, 0);
}

bool Matcher::accept(int32_t token) {
  if (m_->IsTerminated()) return false;
  const bool ok = m_->AcceptToken(token);
  if (ok) ++depth_;
  return ok;
}

void Matcher::rollback(uint32_t n) {
  if (n > depth_) {
    throw std::invalid_argument("rollback of " + std::to_string(n) + " tokens, but only " +
                                std::to_string(depth_) + " were accepted");
  }
  if (n == 0) return;
  m_->Rollback(static_cast<int>(n));
  depth_ -= n;
}

bool Matcher::can_end() const {
  return m_->IsCompleted() || m_->IsTerminated();
}

bool Matcher::terminated() const {
  return m_->IsTerminated();
}

std::string Matcher::forced_bytes() {
  if (m_->IsTerminated()) return {};
  return m_->FindJumpForwardString();
}

void fill_many(Matcher* const* matchers, uint32_t num, uint32_t* bitmask, uint32_t words_per_row,
               int32_t vocab_size) {
  for (uint32_t i = 0; i < num; ++i) {
    matchers[i]->fill(bitmask + static_cast<size_t>(i) * words_per_row, words_per_row, vocab_size);
  }
}

}  // namespace plinth::grammar
