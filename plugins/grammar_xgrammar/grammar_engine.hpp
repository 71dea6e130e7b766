#pragma once
// The grammar plugin's engine, in C++ without the ABI: a vocabulary, a compile cache over
// XGrammar's compiler, and matchers. The plugin (grammar_plugin.cpp), its tests and
// bench/grammar use it directly.
//
// Threads: Engine::compile and stats may be called from any number of threads at once; a Matcher
// from one thread at a time.

#include <condition_variable>
#include <cstdint>
#include <list>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace xgrammar {
class CompiledGrammar;
class GrammarCompiler;
class GrammarMatcher;
class TokenizerInfo;
}  // namespace xgrammar

namespace plinth::grammar {

/// The model's vocabulary: per token id its raw bytes and GGUF token type, and the stop ids.
struct Vocabulary {
  std::vector<std::string> bytes;
  std::vector<int32_t> types;  ///< GGUF token types (1 normal, 3 control, ...), [bytes.size()]
  std::vector<int32_t> stop_ids;
};

/// Mirrors plinth_grammar_spec_kind.
enum class SpecKind : int32_t {
  kJsonSchema = 1,
  kJsonObject = 2,
  kRegex = 3,
  kChoice = 4,
  kEbnf = 5,
  kStructuralTag = 6
};

struct CompileOptions {
  bool compact = false;         ///< no whitespace at all (else bounded runs)
  uint32_t max_whitespace = 4;  ///< bounded: longest whitespace run, bytes
  bool strict = false;          ///< JSON Schema: absent additionalProperties = false
  size_t max_spec_bytes = 0;    ///< 0 = kDefaultMaxSpecBytes
  /// Give up waiting after this long (the compilation goes on in the background, bounded by
  /// kMaxBackgroundCompiles, and lands in the cache); 0 = wait without limit.
  uint32_t timeout_ms = 0;
};

/// Compilations that outlived their caller's timeout and still run; beyond, compile refuses.
inline constexpr int kMaxBackgroundCompiles = 2;

inline constexpr size_t kDefaultMaxSpecBytes = 1u << 20;

/// A spec the engine refuses: malformed, unsupported (pointer names the JSON Schema keyword) or
/// unsatisfiable. what() is the whole message.
class CompileError : public std::invalid_argument {
 public:
  CompileError(std::string pointer, const std::string& message)
      : std::invalid_argument(pointer.empty() ? message : pointer + ": " + message),
        pointer_(std::move(pointer)),
        reason_(message) {}
  const std::string& pointer() const { return pointer_; }
  /// The refusal without its pointer.
  const std::string& reason() const { return reason_; }

 private:
  std::string pointer_;
  std::string reason_;
};

/// A JSON Schema rewritten into the keywords the engine enforces (schema_rewrite.hpp) and checked
/// against the subset (schema_subset.hpp): the JSON text XGrammar compiles. Throws CompileError
/// (malformed, or refused: its pointer names the keyword). Thread-safe.
std::string prepare_json_schema(std::string_view spec, bool strict);

/// A compiled constraint (shared by the cache and the matchers using it).
struct Compiled {
  std::unique_ptr<xgrammar::CompiledGrammar> grammar;
  ~Compiled();
};

struct EngineStats {
  uint64_t compiles = 0, cache_hits = 0, refused = 0;
};

/// How XGrammar's compiler works (its GrammarCompiler's options; every setting gives the same
/// masks, only where and when the work is done differs).
struct EngineConfig {
  /// Threads one compilation uses for its token-mask cache (XGrammar's max_threads); the
  /// server's grammar pool runs several compilations at once besides.
  int compile_threads = 1;
  /// XGrammar's rule-level cache: the token masks of a grammar rule (by the hash of its
  /// automaton and lookahead) kept across compilations, so the JSON rules every schema shares
  /// (strings, numbers, whitespace, ...) are computed once per vocabulary. Bytes it may hold;
  /// 0 = off. XGrammar then also keeps whole compiled grammars, up to twice this (it splits its
  /// memory limit a third / two thirds). 64 MiB compiled 60 JSONSchemaBench files as fast as
  /// 256 MiB did (p50 136 vs 131 ms, 239 ms without the cache).
  size_t mask_cache_bytes = size_t{64} << 20;
  /// Compile without the token-mask cache (XGrammar's dynamic compilation): compile only builds
  /// the grammar, and each grammar position's mask is computed on its first use, by the thread
  /// that fills the mask (the engine thread), then kept. Compilation becomes milliseconds, the
  /// first masks of a constraint cost up to tens of ms each; off by default for that reason.
  bool lazy_masks = false;
};

class Engine {
 public:
  /// Throws std::invalid_argument for an empty vocabulary or a stop id outside it.
  explicit Engine(const Vocabulary& vocab, const EngineConfig& config = {});
  ~Engine();
  Engine(const Engine&) = delete;
  Engine& operator=(const Engine&) = delete;

  /// Compiles (or finds in the cache: key kind, whitespace-normalized spec, options) a spec.
  /// Throws CompileError (also when options.timeout_ms passes first). Thread-safe. The
  /// destructor waits for compilations still running in the background.
  std::shared_ptr<const Compiled> compile(SpecKind kind, std::string_view spec,
                                          const CompileOptions& options);
  EngineStats stats() const;
  /// Waits up to `ms` for the compilations abandoned by their callers to finish; true when none
  /// runs any more.
  bool wait_idle(uint32_t ms);
  int32_t vocab_size() const { return vocab_size_; }
  /// uint32 words per bitmask row.
  uint32_t words_per_row() const { return static_cast<uint32_t>((vocab_size_ + 31) / 32); }

 private:
  std::shared_ptr<const Compiled> compile_and_cache(const std::string& key, SpecKind kind,
                                                    const std::string& spec,
                                                    const CompileOptions& options);
  std::shared_ptr<const Compiled> compile_with_timeout(const std::string& key, SpecKind kind,
                                                       std::string spec,
                                                       const CompileOptions& options);
  std::shared_ptr<const Compiled> compile_uncached(SpecKind kind, std::string_view spec,
                                                   const CompileOptions& options);
  int32_t vocab_size_;
  std::unique_ptr<xgrammar::TokenizerInfo> info_;
  std::unique_ptr<xgrammar::GrammarCompiler> compiler_;
  mutable std::mutex mu_;
  // LRU cache: most recent at the front.
  std::list<std::pair<std::string, std::shared_ptr<const Compiled>>> lru_;
  std::unordered_map<std::string, decltype(lru_)::iterator> index_;
  EngineStats stats_;
  std::condition_variable idle_;
  int running_ = 0;  // compilations in flight (waited for or abandoned by their caller)
  int abandoned_ = 0;
};

/// Kept compiled grammars (LRU beyond).
inline constexpr size_t kCacheEntries = 256;

/// One sequence's position in a grammar.
class Matcher {
 public:
  /// `stop_ids`: the vocabulary's stop ids (accepted where the grammar can end).
  explicit Matcher(std::shared_ptr<const Compiled> grammar);
  ~Matcher();
  Matcher(const Matcher&) = delete;
  Matcher& operator=(const Matcher&) = delete;

  /// Fills `row` ([words] uint32, bit t = token t allowed).
  void fill(uint32_t* row, uint32_t words, int32_t vocab_size);
  /// Advances over `token`; false (unchanged) when refused.
  bool accept(int32_t token);
  /// Undoes the last n accepted tokens; throws std::invalid_argument beyond what was accepted.
  void rollback(uint32_t n);
  bool can_end() const;
  bool terminated() const;
  /// The bytes every continuation starts with ("" when nothing is forced).
  std::string forced_bytes();
  /// Accepted tokens not rolled back.
  uint32_t depth() const { return depth_; }

 private:
  std::shared_ptr<const Compiled> grammar_;
  std::unique_ptr<xgrammar::GrammarMatcher> m_;
  uint32_t depth_ = 0;
};

/// Fills rows of `bitmask` for many matchers at once (row i for matchers[i]).
void fill_many(Matcher* const* matchers, uint32_t num, uint32_t* bitmask, uint32_t words_per_row,
               int32_t vocab_size);

}  // namespace plinth::grammar
