#pragma once
// The host's side of the grammar kind (plinth/grammar.h): compiled constraints shared by
// requests, and one matcher per constrained sequence, with the answers of the plugin checked as
// engine/contract_check.hpp checks the other kinds'.

#include <cstdint>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "engine/grammar_metrics.hpp"
#include "plinth/plinth.h"
#include "runtime/plugin_ref.hpp"

namespace plinth {

/// A constraint the grammar plugin refused (malformed, unsupported keyword, unsatisfiable, over
/// its time limit): the request's fault. what() is the plugin's message (it names the JSON
/// pointer of a refused keyword).
class GrammarSpecError : public std::invalid_argument {
 public:
  using std::invalid_argument::invalid_argument;
};

/// The grammar plugin broke its contract on one sequence (a mask row with no token, a token its
/// mask allowed then refused, a failing call): that sequence alone fails.
class GrammarContractError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// A compiled constraint: releases the plugin's object when the last user drops it.
class CompiledGrammar {
 public:
  /// `metrics` (may be null) gets the mask times of the sequences that use it.
  CompiledGrammar(GrammarRef ref, plinth_grammar* g, std::string plugin_name,
                  std::shared_ptr<GrammarMetrics> metrics = nullptr)
      : ref_(ref), g_(g), name_(std::move(plugin_name)), metrics_(std::move(metrics)) {}
  ~CompiledGrammar();
  CompiledGrammar(const CompiledGrammar&) = delete;
  CompiledGrammar& operator=(const CompiledGrammar&) = delete;
  plinth_grammar* get() const { return g_; }
  GrammarRef ref() const { return ref_; }
  /// The grammar plugin's manifest name, for error messages.
  const std::string& plugin_name() const { return name_; }
  /// Where mask times and constrained requests are counted; null when nobody measures.
  GrammarMetrics* metrics() const { return metrics_.get(); }

 private:
  GrammarRef ref_;
  plinth_grammar* g_;
  std::string name_;
  std::shared_ptr<GrammarMetrics> metrics_;
};

/// What a request constrains its output with.
struct GrammarSpec {
  int32_t kind = 0;  ///< a plinth_grammar_spec_kind
  std::string spec;
  bool strict = false;
  bool compact = false;
};

/// Compiles specs through the grammar plugin. Thread-safe (the plugin's compile is).
class GrammarCompiler {
 public:
  /// `ref` may be null: compile then throws GrammarSpecError saying the pipeline has no grammar.
  /// `metrics` (may be null) gets every compile call's time and the plugin's counters, and is
  /// handed to the compiled grammars (their mask times).
  GrammarCompiler(GrammarRef ref, std::string plugin_name,
                  std::shared_ptr<GrammarMetrics> metrics = nullptr)
      : ref_(ref), name_(std::move(plugin_name)), metrics_(std::move(metrics)) {}
  bool available() const { return static_cast<bool>(ref_); }
  /// Throws GrammarSpecError (the plugin refused the spec, or no grammar plugin),
  /// GrammarContractError (the plugin failed otherwise).
  std::shared_ptr<CompiledGrammar> compile(const GrammarSpec& spec) const;
  /// The plugin's counters (zeros without one).
  plinth_grammar_stats stats() const;

 private:
  GrammarRef ref_;
  std::string name_;
  std::shared_ptr<GrammarMetrics> metrics_;
};

/// One sequence's matcher over a compiled grammar. Engine thread only.
class SequenceGrammar {
 public:
  /// Throws GrammarContractError when the plugin cannot create the matcher.
  SequenceGrammar(std::shared_ptr<CompiledGrammar> grammar, uint32_t vocab_size);
  ~SequenceGrammar();
  SequenceGrammar(const SequenceGrammar&) = delete;
  SequenceGrammar& operator=(const SequenceGrammar&) = delete;

  /// Fills the mask of the next token (bit t set = allowed) and checks it allows one token at
  /// least; returns it ([ceil(vocab / 32)] words, valid until the next call).
  const std::vector<uint32_t>& fill();
  /// The last fill()'s mask.
  const std::vector<uint32_t>& mask() const { return mask_; }
  /// Whether `token` is allowed by the last fill().
  bool allowed(int32_t token) const {
    return ((mask_[static_cast<size_t>(token) / 32] >> (static_cast<uint32_t>(token) % 32)) & 1u) !=
           0;
  }
  /// Advances over `token`, which the last fill() allowed: throws GrammarContractError when the
  /// plugin refuses it.
  void accept(int32_t token);
  /// Accepts `token` without a fill; false when the grammar refuses it (a draft to cut).
  bool try_accept(int32_t token);
  void rollback(uint32_t n);
  bool terminated() const;
  /// The bytes every continuation must start with from the matcher's state (grammar.h,
  /// forced_bytes), at most `capacity` of them; empty when nothing is forced or the plugin does
  /// not offer forced_bytes. Throws GrammarContractError when the call fails.
  std::string forced_bytes(size_t capacity);

  /// Forced-token drafting's note on this sequence (engine/forced_drafts.hpp): the forced bytes it
  /// drafted from and the output length then, kept until the output spells them (then the memo
  /// learns the tokens it took). Engine thread only.
  struct ForcedNote {
    std::string bytes;
    size_t output_pos = 0;
  };
  std::optional<ForcedNote>& forced_note() { return forced_note_; }

 private:
  std::shared_ptr<CompiledGrammar> grammar_;
  GrammarRef ref_;
  std::string name_;
  plinth_grammar_matcher* m_ = nullptr;
  std::vector<uint32_t> mask_;
  std::optional<ForcedNote> forced_note_;
};

}  // namespace plinth
