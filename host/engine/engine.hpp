#pragma once
// The engine: requests in, streamed text out, one `step()` at a time (docs/architecture.md):
//   schedule → copy-on-write → propose drafts → build the flat batch → forward → sample and
//   verify → update the scheduler.
// Single-threaded: every method is called from one thread (the engine thread). A server puts a
// queue in front of it.

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "engine/batch_builder.hpp"
#include "engine/engine_plugins.hpp"
#include "engine/forced_drafts.hpp"
#include "engine/grammar.hpp"
#include "engine/sequence.hpp"
#include "engine/speculation.hpp"
#include "sampling/sampling_params.hpp"

namespace plinth {

class Tokenizer;

struct EngineOptions {
  uint32_t context_length = 0;  ///< the model's maximum positions, tokens
  uint32_t vocab_size = 0;
  std::vector<int32_t> eos_token_ids;  ///< stop tokens by default (EOS, <|im_end|>)
  /// A scheduler that schedules nothing while requests wait, for this long (seconds) without a
  /// step that runs anything, breaks its contract (scheduler.h): step() then throws
  /// std::runtime_error instead of spinning forever, and the caller fails the waiting requests.
  double max_stall_seconds = 10.0;
  /// Forced-token drafting (engine/forced_drafts.hpp): at most this many drafts per constrained
  /// sequence and step from the bytes its grammar forces, verified in the same forward; 0 turns
  /// it off. A request that opts out of speculation (GenerationRequest::speculative) gets none.
  uint32_t forced_draft_tokens = 8;
  /// Forced drafts only while the last step's batch held at most this many sequences: each draft
  /// is a row of the forward, and on a CPU rows are not free (bench/grammar_e2e on SmolLM2, 2
  /// threads: TPOT x0.99 at concurrency 1, x1.81 at 16 with drafts in every batch).
  uint32_t forced_draft_max_batch = 4;
};

/// A request: prompt token ids ([num_prompt_tokens], each in [0, vocab)) and sampling parameters.
struct GenerationRequest {
  std::vector<int32_t> prompt;
  SamplingParams params;
  int32_t priority = 0;  ///< lower runs first under the scheduler's priority policy
  /// The request's prefix-cache namespace (OpenAI-style `cache_salt`): requests with different
  /// salts never share cached KV blocks. Empty = the default namespace. Any length: the engine
  /// keeps (and shows the plugins) only its fixed-size digest (engine/cache_salt.hpp).
  std::string cache_salt;
  /// Never match nor insert this request in the prefix cache (e.g. it wants prompt logprobs).
  bool bypass_prefix_cache = false;
  /// One of n choices: the request added just before has the same prompt, so this one may share
  /// (fork) its prompt KV instead of computing it again. Ignored when the prompts differ.
  bool share_prompt_with_previous = false;
  /// Allow speculative decoding for this request (when the pipeline has a speculator). The output
  /// never depends on it at temperature 0; false only saves the draft work.
  bool speculative = true;
  /// The caller reads the sampled tokens' logprobs (Sequence::samples()). False lets a greedy
  /// request without penalties take the backend's argmax id (plinth_forward_output.argmax_ids)
  /// without scoring the logits; its samples then carry a NaN logprob.
  bool logprobs = false;
  /// Structured outputs: the compiled constraint the output must follow (GrammarCompiler), or
  /// null. A constrained sequence is speculated on with masked verification, and drafts the
  /// bytes its grammar forces (EngineOptions::forced_draft_tokens).
  std::shared_ptr<CompiledGrammar> grammar;
  /// A grammar trigger (vLLM / llama.cpp: a lazy grammar): with `grammar`, the output is free
  /// until this token id ([0, vocab), normally a control token such as Mistral's [TOOL_CALLS])
  /// is sampled, and constrained by the grammar from the token after it
  /// (Sequence::set_grammar_trigger). Until then the request decodes exactly as one without a
  /// grammar; speculative drafts are cut before the trigger. The trigger adds no text;
  /// RequestOutput::trigger_offset says where it fell. Ignored without `grammar`.
  std::optional<int32_t> grammar_trigger;
};

/// What one step produced for one request.
struct RequestOutput {
  uint64_t request_id = 0;
  std::string text_delta;              ///< whole UTF-8 characters, stop strings removed
  std::vector<int32_t> new_token_ids;  ///< tokens sampled this step
  bool finished = false;
  std::string finish_reason;  ///< "stop", "length", "abort" or "error" when finished
  /// With finish_reason "stop" by a stop string: its index in the request's params.stop; -1
  /// otherwise (EOS, a stop token id, or not finished).
  int32_t stop_string = -1;
  std::string error;  ///< with "error": the plugin that broke its contract and the rule, or the
                      ///< non-finite logits row (NonFiniteLogits) and whose it is
  /// With "error": the request's own sampling parameter that drove its logits non-finite
  /// ("repetition_penalty", "logit_bias", ...): the request's fault (a server answers 400 naming
  /// it). Empty when a plugin or the model is at fault (500).
  std::string error_param;
  /// The grammar trigger (GenerationRequest::grammar_trigger) was sampled this step: text_delta's
  /// bytes before this offset are the text of the tokens before it (nothing is held back across
  /// it), the bytes from it on are the grammar's output. nullopt otherwise.
  std::optional<size_t> trigger_offset;
};

/// A counters snapshot for logs and metrics.
struct EngineStats {
  uint32_t num_running = 0, num_waiting = 0;
  uint64_t num_preemptions = 0;
  plinth_kv_stats kv{};
  uint64_t num_steps = 0;
  uint64_t num_computed_tokens = 0;  ///< tokens the backend computed (prefill + decode), total
  uint64_t num_graph_steps = 0;      ///< steps whose forward the graph runner replayed
  bool has_speculator = false;
  SpecStats spec;  ///< speculative decoding's counters (zero without a speculator)
  /// Forced-token drafting's counters (engine/forced_drafts.hpp): proposals verified, forced
  /// draft tokens and those accepted; zero while no constrained sequence drafted.
  SpecStats forced;
};

class Engine {
 public:
  /// `plugins` and `tokenizer` must outlive the engine.
  Engine(const EnginePlugins& plugins, const Tokenizer& tokenizer, EngineOptions options);
  ~Engine();
  Engine(const Engine&) = delete;
  Engine& operator=(const Engine&) = delete;

  /// Queues a request; returns its id. Throws std::invalid_argument (message names the field) for
  /// an empty prompt, a token id outside the vocabulary, a prompt of context_length tokens or more,
  /// invalid sampling parameters, or a request the scheduler refuses (one that could never fit
  /// the KV pool); nothing is queued then.
  uint64_t add_request(GenerationRequest request);

  /// Aborts a request wherever it is; its KV blocks are freed at once. The next step() reports it
  /// finished with "abort". Unknown or finished ids are ignored.
  void abort_request(uint64_t id);

  /// Runs one engine step and returns the news of every request that produced text or finished.
  /// A plugin that hands back something its contract forbids (engine/contract_check.hpp: a
  /// scheduled id not running, a block table outside the pool, missing logits rows...) fails the
  /// requests it touched with finish_reason "error" and RequestOutput::error naming the plugin
  /// and the rule; their KV blocks are freed and the engine goes on with the others. So does a
  /// sequence whose logits row holds NaN or +inf, or only -inf, after its sampling transforms
  /// (NonFiniteLogits): it alone fails, RequestOutput::error_param naming the request's parameter
  /// at fault, or empty when the model produced the value.
  /// Throws PluginCallError when a plugin call returns an error status, std::runtime_error when
  /// the scheduler stalls (EngineOptions::max_stall_seconds).
  std::vector<RequestOutput> step();

  /// True while some request is waiting or running.
  bool has_unfinished() const { return !live_.empty(); }

  /// A request's sequence (finished ones stay until release()).
  const Sequence* find(uint64_t id) const;
  /// Forgets a finished request.
  void release(uint64_t id);

  EngineStats stats() const;

 private:
  double now() const;
  /// Throws when the scheduler has scheduled nothing for options_.max_stall_seconds while
  /// requests are live (a stuck scheduler plugin).
  void check_progress(const plinth_sched_output& sched);
  // The parts of step(), in order.
  plinth_sched_output schedule();
  /// The scheduled sequences' batch entries with their block tables, after copy-on-write. A
  /// decision naming a sequence that is not running fails all it scheduled (empty result); a
  /// sequence with impossible counts or a bad block table fails alone and is left out.
  std::vector<BatchBuilder::Entry> prepare_batch(const plinth_sched_output& sched);
  void copy_blocks(const plinth_sched_output& sched);
  /// The entry of scheduled item `i`, or nullopt after failing its sequence (contract_check).
  std::optional<BatchBuilder::Entry> entry(const plinth_sched_output& sched, uint32_t i);
  /// Forced-token drafts, then the speculator's drafts (cut where a grammar refuses them); the
  /// sequences a speculator's proposal broke speculator.h on fail and leave `entries`. Entries
  /// left without drafts give their unused draft slots back (num_new = their own tokens).
  void propose_drafts(std::vector<BatchBuilder::Entry>& entries);
  /// Whether a live sequence may take forced drafts (constrained and speculative) and the last
  /// batch was small enough (forced_draft_max_batch): the scheduler then reserves
  /// forced_->max_drafts() draft slots per decoding sequence.
  bool wants_forced_slots() const;
  /// The backend's (or graph runner's) output, checked against the batch; nullopt after failing
  /// every sequence of `entries` when it breaks backend.h.
  std::optional<plinth_forward_output> forward(const plinth_batch& batch,
                                               const std::vector<BatchBuilder::Entry>& entries);
  /// The backend's argmax id of logits row `row` (ABI 1.3; forward checked its range): -1 (a
  /// non-finite row) throws NonFiniteLogits (the model's) like the sampler's refusal.
  int32_t argmax_id(const plinth_forward_output& fwd, size_t row) const;
  /// Fails `seq` for its non-finite logits row: the message names the sequence, the cause and,
  /// when the model is at fault, the plugin that ran the forward (runner_).
  void fail_non_finite(const Sequence& seq, const NonFiniteLogits& bad);
  /// Appends each logits-owning sequence's tokens of `fwd` (sampled, argmax, or its verified
  /// drafts and the next token) and adds its RequestOutput to `outputs`.
  void sample_and_append(const std::vector<BatchBuilder::Entry>& entries,
                         const plinth_forward_output& fwd, std::vector<RequestOutput>& outputs);
  /// One sequence's part of sample_and_append: its rows start at `first`; `verdict` is null
  /// without drafts. A non-finite row fails the sequence alone (what came before it is kept).
  void append_sequence(const BatchBuilder::Entry& e, const Speculation::Verdict* verdict,
                       const plinth_forward_output& fwd, size_t first, double t,
                       std::vector<RequestOutput>& outputs);
  /// Appends token `j` of the sequence's run (rows from `first`) and returns its text delta:
  /// the verified draft or next token with a verdict, else the argmax or a sampled token.
  /// Throws NonFiniteLogits for a non-finite row.
  std::string append_token(Sequence& seq, const BatchBuilder::Entry& e,
                           const Speculation::Verdict* verdict, const plinth_forward_output& fwd,
                           size_t first, size_t j, double t) const;
  void update_scheduler(const std::vector<BatchBuilder::Entry>& entries);
  /// Appends the news of the requests aborted or failed since the last report.
  void report_ended(std::vector<RequestOutput>& outputs);
  /// Takes a live sequence out of the scheduler (its KV blocks return to the pool) and the
  /// speculator, and out of live_.
  void drop(uint64_t id);
  /// Ends live sequence `id` with "error" and `why` (a plugin broke its contract on it, or its
  /// logits turned non-finite; `param`: the request's parameter at fault); the step reports it.
  void fail_sequence(uint64_t id, const std::string& why, const std::string& param = {});
  /// Answers plinth_host_api.get_seq for the plugins: tokens, prompt length, salt, flags.
  int32_t describe(plinth_seq_id id, plinth_seq_view* out) const;

  EnginePlugins plugins_;
  const Tokenizer& tokenizer_;
  EngineOptions options_;
  plinth_kv_info kv_info_{};
  BatchBuilder batch_builder_;
  std::optional<Speculation> speculation_;
  std::optional<ForcedDrafts> forced_;  // forced-token drafting (options_.forced_draft_tokens)
  uint32_t last_batch_size_ = 0;        // sequences in the last step's batch
  uint32_t lookahead_ = 0;
  std::string runner_;  // the plugin that ran the last forward, as contract::plugin names it //
                        // draft slots per decoding sequence asked of this step's schedule
  uint64_t next_id_ = 1;
  uint64_t last_parent_ = 0;  // the id a share_prompt_with_previous request forks from
  uint64_t num_steps_ = 0;
  double stalled_since_ = 0;  ///< start of the current run of empty steps with live requests
  uint64_t num_computed_tokens_ = 0;
  uint64_t num_graph_steps_ = 0;
  std::unordered_map<uint64_t, std::unique_ptr<Sequence>> sequences_;  // live and finished
  std::unordered_map<uint64_t, Sequence*> live_;                       // waiting or running
  std::vector<uint64_t> aborted_;  // reported as finished by the next step
  std::vector<uint64_t> failed_;   // failed by a plugin's broken contract; reported by this step
};

}  // namespace plinth
