#include "engine/engine.hpp"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <stdexcept>
#include <string>

#include "engine/array_stride.hpp"
#include "engine/cache_salt.hpp"
#include "engine/contract_check.hpp"
#include "runtime/call.hpp"
#include "runtime/plugin_host_api.hpp"
#include "tokenizer/tokenizer.hpp"

namespace plinth {

Engine::Engine(const EnginePlugins& plugins, const Tokenizer& tokenizer, EngineOptions options)
    : plugins_(plugins), tokenizer_(tokenizer), options_(std::move(options)) {
  if (plugins_.backend.vtable == nullptr || plugins_.kv_cache.vtable == nullptr ||
      plugins_.scheduler.vtable == nullptr) {
    throw std::invalid_argument("engine: a backend, a kv_cache and a scheduler are required");
  }
  plinth_error err = make_error();
  kv_info_.struct_size = sizeof(kv_info_);
  check(plugins_.kv_cache.vtable->get_info(plugins_.kv_cache.instance, &kv_info_, &err), err,
        "kv_cache.get_info");
  if (plugins_.speculator.vtable != nullptr) {
    speculation_.emplace(plugins_.speculator.vtable, plugins_.speculator.instance,
                         plugins_.speculator_abi_minor, options_.vocab_size,
                         options_.context_length, plugins_.names.speculator);
  }
  if (options_.forced_draft_tokens > 0) {
    forced_.emplace(tokenizer_, options_.vocab_size, options_.context_length,
                    options_.forced_draft_tokens);
  }
  if (plugins_.host_api != nullptr) {
    plugins_.host_api->set_seq_lookup(
        [this](plinth_seq_id id, plinth_seq_view* out) { return describe(id, out); });
  }
}

int32_t Engine::describe(plinth_seq_id id, plinth_seq_view* out) const {
  auto it = live_.find(id);
  if (it == live_.end()) return PLINTH_ERR_NOT_FOUND;
  const Sequence& seq = *it->second;
  plinth_seq_view v{};
  v.struct_size = std::min<uint32_t>(out->struct_size, sizeof(plinth_seq_view));
  v.num_tokens = static_cast<uint32_t>(seq.tokens().size());
  v.tokens = seq.tokens().data();
  v.num_prompt_tokens = seq.num_prompt_tokens();
  v.flags = seq.bypass_prefix_cache() ? uint32_t{PLINTH_SEQ_NO_PREFIX_CACHE} : 0u;
  v.cache_salt = seq.cache_key_salt().data();
  v.cache_salt_len = static_cast<uint32_t>(seq.cache_key_salt().size());
  std::memcpy(out, &v, v.struct_size);  // only the fields the caller knows
  return PLINTH_OK;
}

Engine::~Engine() {
  if (plugins_.host_api != nullptr) plugins_.host_api->set_seq_lookup({});
  // Give every block back so the pool is whole if the plugins outlive the engine.
  for (auto& [id, seq] : live_)
    plugins_.scheduler.vtable->abort_seq(plugins_.scheduler.instance, id);
}

double Engine::now() const {
  using namespace std::chrono;
  return duration<double>(steady_clock::now().time_since_epoch()).count();
}

uint64_t Engine::add_request(GenerationRequest request) {
  const auto& prompt = request.prompt;
  if (prompt.empty()) throw std::invalid_argument("prompt: must hold at least one token");
  for (size_t i = 0; i < prompt.size(); ++i) {
    if (prompt[i] < 0 || static_cast<uint32_t>(prompt[i]) >= options_.vocab_size) {
      throw std::invalid_argument("prompt[" + std::to_string(i) + "]: token id " +
                                  std::to_string(prompt[i]) + " is outside the vocabulary [0, " +
                                  std::to_string(options_.vocab_size) + ")");
    }
  }
  if (prompt.size() >= options_.context_length) {
    throw std::invalid_argument(
        "prompt: " + std::to_string(prompt.size()) + " tokens, but the model's context holds " +
        std::to_string(options_.context_length) + "; shorten the prompt to at most " +
        std::to_string(options_.context_length - 1) + " tokens");
  }
  validate(request.params);
  if (request.grammar && request.grammar_trigger &&
      (*request.grammar_trigger < 0 ||
       static_cast<uint32_t>(*request.grammar_trigger) >= options_.vocab_size)) {
    throw std::invalid_argument(
        "grammar_trigger: token id " + std::to_string(*request.grammar_trigger) +
        " is outside the vocabulary [0, " + std::to_string(options_.vocab_size) + ")");
  }

  uint64_t id = next_id_++;
  auto seq = std::make_unique<Sequence>(id, std::move(request.prompt), request.params, tokenizer_,
                                        options_.eos_token_ids, now());
  // A digest, not the salt: the prefix cache keeps it as long as a block of its namespace stays
  // cached, and a client must not be able to grow that with long salts.
  seq->set_cache_key_salt(cache_salt_digest(request.cache_salt));
  seq->set_bypass_prefix_cache(request.bypass_prefix_cache);
  seq->set_speculative(request.speculative);
  seq->set_needs_logprobs(request.logprobs);
  if (request.grammar) {
    auto grammar = std::make_unique<SequenceGrammar>(request.grammar, options_.vocab_size);
    if (request.grammar_trigger) {
      seq->set_grammar_trigger(std::move(grammar), *request.grammar_trigger);
    } else {
      seq->set_grammar(std::move(grammar));
    }
  }
  plinth_sched_request req{};
  req.struct_size = sizeof(req);
  req.seq = id;
  req.num_prompt_tokens = seq->num_prompt_tokens();
  uint32_t room = options_.context_length - seq->num_prompt_tokens();
  req.max_tokens = std::min<uint32_t>(static_cast<uint32_t>(request.params.max_tokens), room);
  req.priority = request.priority;
  req.arrival_time = seq->timings().arrival;
  if (request.share_prompt_with_previous && live_.count(last_parent_) != 0) {
    const Sequence& parent = *live_.at(last_parent_);
    if (std::ranges::equal(parent.prompt(), seq->prompt())) req.parent = last_parent_;
  }
  plinth_error err = make_error();
  int32_t status = plugins_.scheduler.vtable->add(plugins_.scheduler.instance, &req, &err);
  // The scheduler refuses a request that can never run (e.g. larger than the whole KV pool):
  // that is about this request, not a broken plugin.
  if (status == PLINTH_ERR_INVALID_ARGUMENT) throw std::invalid_argument(error_message(err));
  check(status, err, "scheduler.add");
  if (req.parent == 0) last_parent_ = id;
  if (GrammarMetrics* m = request.grammar ? request.grammar->metrics() : nullptr) {
    m->on_constrained_request();
  }
  live_[id] = seq.get();
  sequences_[id] = std::move(seq);
  return id;
}

void Engine::abort_request(uint64_t id) {
  auto it = live_.find(id);
  if (it == live_.end()) return;
  it->second->abort(now());
  drop(id);
  aborted_.push_back(id);
}

void Engine::fail_sequence(uint64_t id, const std::string& why, const std::string& param) {
  auto it = live_.find(id);
  if (it == live_.end()) return;
  it->second->fail(why, now(), param);
  drop(id);
  failed_.push_back(id);
}

void Engine::drop(uint64_t id) {
  plugins_.scheduler.vtable->abort_seq(plugins_.scheduler.instance, id);
  if (speculation_) speculation_->release(id);
  live_.erase(id);
}

// One engine step (docs/architecture.md, "One engine step"): the scheduler decides (and, inside,
// matches and inserts prefix-cache blocks and allocates KV, with draft slots for decoding
// sequences when there is a speculator), the backend applies copy-on-write, the speculator
// proposes drafts into the reserved slots, the backend runs the flat batch, the host samples (or
// verifies the drafts) and appends, and the scheduler learns the outcome (rejected slots are
// truncated). What a plugin hands back is checked first (contract_check.hpp): the requests a
// broken contract touches fail and leave the batch, the others go on.
std::vector<RequestOutput> Engine::step() {
  std::vector<RequestOutput> outputs;
  if (!live_.empty()) {
    const plinth_sched_output sched = schedule();
    std::vector<BatchBuilder::Entry> entries = prepare_batch(sched);
    if (!entries.empty()) propose_drafts(entries);  // may fail sequences the speculator broke
    if (!entries.empty()) {
      const auto fwd = forward(batch_builder_.build(entries, kv_info_.block_size), entries);
      if (fwd) {
        sample_and_append(entries, *fwd, outputs);
        update_scheduler(entries);
      }
    }
  }
  report_ended(outputs);
  return outputs;
}

void Engine::report_ended(std::vector<RequestOutput>& outputs) {
  for (const std::vector<uint64_t>* ids : {&aborted_, &failed_}) {
    for (uint64_t id : *ids) {
      RequestOutput o;
      o.request_id = id;
      o.finished = true;
      o.finish_reason = "abort";
      if (const Sequence* seq = find(id); seq != nullptr) {  // release() may have come first
        o.finish_reason = seq->finish_reason().value_or("abort");
        o.error = seq->error();
        o.error_param = seq->error_param();
      }
      outputs.push_back(std::move(o));
    }
  }
  aborted_.clear();
  failed_.clear();
}

plinth_sched_output Engine::schedule() {
  plinth_error err = make_error();
  plinth_sched_step step_in{sizeof(plinth_sched_step), 0};
  if (speculation_) step_in.num_lookahead_tokens = speculation_->lookahead_slots(last_batch_size_);
  if (forced_ && wants_forced_slots()) {
    step_in.num_lookahead_tokens = std::max(step_in.num_lookahead_tokens, forced_->max_drafts());
  }
  lookahead_ = step_in.num_lookahead_tokens;
  plinth_sched_output sched{};
  sched.struct_size = sizeof(sched);
  check(plugins_.scheduler.vtable->schedule(plugins_.scheduler.instance, &step_in, &sched, &err),
        err, "scheduler.schedule");
  num_steps_++;
  check_progress(sched);
  for (uint32_t i = 0; i < sched.num_preempted; ++i) {
    if (auto it = live_.find(sched.preempted[i]); it != live_.end()) {
      it->second->timings().num_preemptions++;
    }
  }
  return sched;
}

bool Engine::wants_forced_slots() const {
  if (last_batch_size_ > options_.forced_draft_max_batch) return false;
  return std::any_of(live_.begin(), live_.end(), [](const auto& kv) {
    return kv.second->constrained() && kv.second->speculative();
  });
}

void Engine::check_progress(const plinth_sched_output& sched) {
  if (sched.num_scheduled > 0 || live_.empty()) {
    stalled_since_ = 0;
    return;
  }
  const double t = now();
  if (stalled_since_ == 0) stalled_since_ = t;
  if (t - stalled_since_ < options_.max_stall_seconds) return;
  stalled_since_ = 0;
  throw std::runtime_error(
      "scheduler.schedule scheduled nothing for " + std::to_string(options_.max_stall_seconds) +
      " s while " + std::to_string(live_.size()) +
      " requests wait and none runs: a scheduler must run a waiting request when nothing runs "
      "(scheduler.h); the scheduler plugin is stuck, so its requests fail");
}

void Engine::copy_blocks(const plinth_sched_output& sched) {
  if (sched.num_copies == 0) return;  // copy-on-write before anything reads the blocks
  plinth_error err = make_error();
  check(plugins_.backend.vtable->copy_blocks(plugins_.backend.instance, sched.copies,
                                             sched.num_copies, &err),
        err, "backend.copy_blocks");
}

std::vector<BatchBuilder::Entry> Engine::prepare_batch(const plinth_sched_output& sched) {
  std::vector<BatchBuilder::Entry> entries;
  if (sched.num_scheduled == 0) return entries;
  auto state = [this](plinth_seq_id id) {
    if (live_.count(id) != 0) return contract::SeqState::kLive;
    return sequences_.count(id) != 0 ? contract::SeqState::kFinished : contract::SeqState::kUnknown;
  };
  const std::string scheduler = contract::plugin("scheduler", plugins_.names.scheduler);
  std::optional<std::string> why = contract::scheduled_ids(scheduler, sched, state);
  if (!why) why = contract::block_copies(scheduler, sched, kv_info_.num_blocks);
  if (why) {
    // The decision as a whole is broken: none of it runs, and what it scheduled fails.
    const std::string msg = *why + "; the sequences of that step fail (" +
                            std::to_string(sched.num_scheduled) + " scheduled)";
    for (uint32_t i = 0; sched.seqs != nullptr && i < sched.num_scheduled; ++i) {
      fail_sequence(sched.seqs[i], msg);
    }
    return entries;
  }
  copy_blocks(sched);
  entries.reserve(sched.num_scheduled);
  const double t = now();
  for (uint32_t i = 0; i < sched.num_scheduled; ++i) {
    if (auto e = entry(sched, i)) {
      SequenceTimings& timings = live_.at(sched.seqs[i])->timings();
      if (timings.scheduled == 0) timings.scheduled = t;
      entries.push_back(std::move(*e));
    }
  }
  last_batch_size_ = static_cast<uint32_t>(entries.size());
  return entries;
}

std::optional<BatchBuilder::Entry> Engine::entry(const plinth_sched_output& sched, uint32_t i) {
  const plinth_seq_id id = sched.seqs[i];
  Sequence* seq = live_.at(id);
  const uint32_t computed = sched.num_computed[i], num_new = sched.num_new_tokens[i];
  const auto num_tokens = static_cast<uint32_t>(seq->tokens().size());
  if (auto why = contract::scheduled_counts(contract::plugin("scheduler", plugins_.names.scheduler),
                                            id, computed, num_new, num_tokens, lookahead_)) {
    fail_sequence(id, *why);
    return std::nullopt;
  }
  const std::string kv_cache = contract::plugin("kv_cache", plugins_.names.kv_cache);
  const int32_t* blocks = nullptr;
  uint32_t num_blocks = 0;
  plinth_error err = make_error();
  const int32_t status = plugins_.kv_cache.vtable->get_block_table(plugins_.kv_cache.instance, id,
                                                                   &blocks, &num_blocks, &err);
  if (status != PLINTH_OK) {
    fail_sequence(id, kv_cache + " has no block table for scheduled sequence " +
                          std::to_string(id) + " (" + error_message(err) +
                          ") (plinth/kv_cache.h: the scheduler allocates a sequence's KV "
                          "through the kv_cache before it schedules it)");
    return std::nullopt;
  }
  const std::span<const int32_t> table(blocks, num_blocks);
  if (auto why = contract::block_table(kv_cache, id, table, kv_info_, computed + num_new)) {
    fail_sequence(id, *why);
    return std::nullopt;
  }
  return BatchBuilder::Entry{seq, computed, num_new, table, {}, {}};
}

void Engine::propose_drafts(std::vector<BatchBuilder::Entry>& entries) {
  // Forced-token drafts first: a sequence whose grammar forces bytes drafts their tokenization.
  if (forced_ && entries.size() <= options_.forced_draft_max_batch) forced_->propose(entries);
  if (speculation_) {
    // A proposal that breaks speculator.h fails the sequences it touched; they leave the batch.
    const std::vector<Speculation::Failure> failures = speculation_->propose(entries);
    for (const Speculation::Failure& f : failures) fail_sequence(f.seq, f.why);
    if (!failures.empty()) {
      std::erase_if(entries,
                    [this](const BatchBuilder::Entry& e) { return live_.count(e.seq->id()) == 0; });
    }
  }
  for (BatchBuilder::Entry& e : entries) {
    // Structured outputs: a constrained sequence's speculator drafts are cut at the first token
    // its grammar refuses (no forward is spent on a draft that can never be accepted); forced
    // drafts were cut when proposed. A dormant grammar's are cut before its trigger token.
    if (!e.drafts.empty() && !e.forced && (e.seq->constrained() || e.seq->dormant())) {
      size_t keep = 0;  // a failing plugin call: no drafts; the sampling step fails the sequence
      try {
        keep = e.seq->grammar_valid_prefix(e.drafts);
      } catch (const GrammarContractError&) {
      }
      if (keep < e.drafts.size()) {
        e.num_new -= static_cast<uint32_t>(e.drafts.size() - keep);
        if (!e.draft_probs.empty()) e.draft_probs.resize(keep * options_.vocab_size);
        e.drafts.resize(keep);
      }
    }
    // Without drafts an entry computes its own tokens only: its draft slots go back at update.
    const auto len = static_cast<uint32_t>(e.seq->tokens().size());
    if (e.drafts.empty() && e.num_computed + e.num_new > len) e.num_new = len - e.num_computed;
  }
}

std::optional<plinth_forward_output> Engine::forward(
    const plinth_batch& batch, const std::vector<BatchBuilder::Entry>& entries) {
  num_computed_tokens_ += batch.num_tokens;
  plinth_error err = make_error();
  plinth_forward_output fwd{};
  fwd.struct_size = sizeof(fwd);
  // Decode-only batches the graph runner can replay go through it; the rest run eagerly.
  const plinth_graph_runner_vtable* graph = plugins_.graph_runner.vtable;
  std::string runner;
  if (graph != nullptr && graph->can_run(plugins_.graph_runner.instance, &batch) != 0) {
    num_graph_steps_++;
    check(graph->run(plugins_.graph_runner.instance, &batch, &fwd, &err), err, "graph_runner.run");
    runner = contract::plugin("graph_runner", plugins_.names.graph_runner);
  } else {
    check(plugins_.backend.vtable->forward(plugins_.backend.instance, &batch, &fwd, &err), err,
          "backend.forward");
    runner = contract::plugin("backend", plugins_.names.backend);
  }
  runner_ = runner;
  if (auto why = contract::forward_output(runner, batch, fwd, options_.vocab_size)) {
    // The rows cannot be trusted one by one: the whole batch fails.
    const std::string msg =
        *why + "; the " + std::to_string(entries.size()) + " sequences of that batch fail";
    for (const BatchBuilder::Entry& e : entries) fail_sequence(e.seq->id(), msg);
    return std::nullopt;
  }
  return fwd;
}

int32_t Engine::argmax_id(const plinth_forward_output& fwd, size_t row) const {
  const int32_t id = fwd.argmax_ids[row];
  if (id == -1) {  // backend.h: the row holds NaN or +inf, which the host sampler refuses too
    throw NonFiniteLogits({},
                          "argmax id -1: the logits row holds NaN or +inf as the model "
                          "produced it; the model produced a non-finite value");
  }
  return id;
}

void Engine::fail_non_finite(const Sequence& seq, const NonFiniteLogits& bad) {
  // The request's own parameter at fault: a request error naming it. Otherwise the model's (or
  // the backend's) value: a server error naming the plugin that computed the row.
  std::string msg = "sequence " + std::to_string(seq.id()) + ", after " +
                    std::to_string(seq.output().size()) + " generated tokens: " + bad.what();
  if (bad.param().empty()) msg += " (" + runner_ + ")";
  msg += "; this request fails, the others go on";
  fail_sequence(seq.id(), msg, bad.param());
}

namespace {

// Logits row `row` of `fwd`: vocab_size floats.
std::span<const float> logits_row(const plinth_forward_output& fwd, size_t row) {
  return {fwd.logits + row * fwd.vocab_size, fwd.vocab_size};
}

// first[i]: the first logits row that entry i owns (owners[r]: the entry of row r).
std::vector<size_t> first_rows(std::span<const uint32_t> owners, size_t num_entries) {
  std::vector<size_t> first(num_entries, 0);
  for (size_t r = owners.size(); r-- > 0;) first[owners[r]] = r;
  return first;
}

}  // namespace

void Engine::sample_and_append(const std::vector<BatchBuilder::Entry>& entries,
                               const plinth_forward_output& fwd,
                               std::vector<RequestOutput>& outputs) {
  // The sequences whose chunk reached their last token own one logits row each; one with drafts
  // owns 1 + drafts rows (its last token, then each draft), verified together.
  const double t = now();
  std::span<const uint32_t> owners = batch_builder_.logits_owner();
  const std::vector<size_t> first_row = first_rows(owners, entries.size());
  std::vector<Verdict> verdicts(entries.size());
  if (speculation_) verdicts = speculation_->verify(entries, first_row, fwd.logits);
  for (size_t i = 0; forced_ && i < entries.size(); ++i) {
    if (entries[i].forced && !entries[i].drafts.empty()) {
      verdicts[i] = forced_->verify(entries[i], fwd.logits + first_row[i] * fwd.vocab_size);
    }
  }
  for (size_t r = 0; r < owners.size();) {
    const size_t first = r;  // this sequence's first row
    const BatchBuilder::Entry& e = entries[owners[first]];
    r += 1 + e.drafts.size();
    const Verdict* verdict = e.drafts.empty() ? nullptr : &verdicts[owners[first]];
    append_sequence(e, verdict, fwd, first, t, outputs);
  }
}

void Engine::append_sequence(const BatchBuilder::Entry& e, const Verdict* verdict,
                             const plinth_forward_output& fwd, size_t first, double t,
                             std::vector<RequestOutput>& outputs) {
  Sequence& seq = *e.seq;
  RequestOutput o;
  o.request_id = seq.id();
  try {
    if (verdict != nullptr && verdict->failure) throw *verdict->failure;
    if (verdict != nullptr && verdict->grammar_failure) {
      throw GrammarContractError(*verdict->grammar_failure);
    }
    if (verdict != nullptr && verdict->speculator_failure) {
      fail_sequence(seq.id(), *verdict->speculator_failure);  // its tokens cannot be trusted
      return;
    }
    // Without drafts: one sampled token. With drafts: the accepted ones, then the correction
    // or bonus token, each through the stop rules (a stop inside the run ends it there).
    const size_t num_tokens = verdict == nullptr ? 1 : verdict->accepted + 1;
    for (size_t j = 0; j < num_tokens && !seq.finished(); ++j) {
      o.text_delta += append_token(seq, e, verdict, fwd, first, j, t);
      o.new_token_ids.push_back(seq.tokens().back());
      if (seq.trigger_index() && *seq.trigger_index() + 1 == seq.output().size()) {
        o.trigger_offset = o.text_delta.size();  // this token armed the sequence's grammar
      }
      if (!seq.finished() && seq.tokens().size() >= options_.context_length) {
        o.text_delta += seq.finish_at_context(t);
      }
    }
  } catch (const NonFiniteLogits& bad) {
    // This sequence alone fails (its KV is freed, report_ended says why); tokens appended
    // before the bad row are still delivered.
    if (!o.new_token_ids.empty()) outputs.push_back(std::move(o));
    fail_non_finite(seq, bad);
    return;
  } catch (const GrammarContractError& bad) {
    // The grammar plugin broke its contract on this sequence: it alone fails.
    if (!o.new_token_ids.empty()) outputs.push_back(std::move(o));
    fail_sequence(seq.id(), bad.what());
    return;
  }
  o.finished = seq.finished();
  if (o.finished) {
    o.finish_reason = *seq.finish_reason();
    if (seq.stop_string()) o.stop_string = static_cast<int32_t>(*seq.stop_string());
  }
  outputs.push_back(std::move(o));
}

std::string Engine::append_token(Sequence& seq, const BatchBuilder::Entry& e,
                                 const Verdict* verdict, const plinth_forward_output& fwd,
                                 size_t first, size_t j, double t) const {
  if (verdict != nullptr) {
    const int32_t token = j < verdict->accepted ? e.drafts[j] : verdict->next_token;
    return seq.append_scored(logits_row(fwd, first + j), token, t);
  }
  if (fwd.argmax_ids != nullptr && seq.argmax_suffices()) {
    return seq.append_argmax(argmax_id(fwd, first), t);
  }
  return seq.sample_and_append(logits_row(fwd, first), t);
}

void Engine::update_scheduler(const std::vector<BatchBuilder::Entry>& entries) {
  // Finished sequences free their KV there (after inserting their full blocks into the cache).
  // A sequence failed while sampling (a non-finite row) is already out of the scheduler.
  std::vector<plinth_sched_result> results;
  std::vector<const BatchBuilder::Entry*> kept;
  for (const BatchBuilder::Entry& e : entries) {
    if (live_.count(e.seq->id()) != 0) kept.push_back(&e);
  }
  if (kept.empty()) return;
  results.resize(kept.size());
  for (size_t i = 0; i < kept.size(); ++i) {
    const BatchBuilder::Entry& e = *kept[i];
    const Sequence& seq = *e.seq;
    results[i].seq = seq.id();
    // KV is valid for the tokens computed and kept: rejected drafts' slots are given back.
    results[i].num_computed = std::min<uint32_t>(e.num_computed + e.num_new,
                                                 static_cast<uint32_t>(seq.tokens().size()) - 1);
    results[i].num_tokens = static_cast<uint32_t>(seq.tokens().size());
    results[i].finished = seq.finished() ? 1 : 0;
  }
  plinth_error err = make_error();
  // An array struct: passed at the stride of the scheduler's ABI minor (scheduler.h).
  const StridedArray<plinth_sched_result> packed(results,
                                                 sched_result_stride(plugins_.scheduler_abi_minor));
  check(plugins_.scheduler.vtable->update(plugins_.scheduler.instance, packed.data(), packed.size(),
                                          &err),
        err, "scheduler.update");
  for (const plinth_sched_result& r : results) {
    if (!r.finished) continue;
    if (speculation_) speculation_->release(r.seq);
    live_.erase(r.seq);
  }
}

const Sequence* Engine::find(uint64_t id) const {
  auto it = sequences_.find(id);
  return it == sequences_.end() ? nullptr : it->second.get();
}

void Engine::release(uint64_t id) {
  if (live_.count(id) == 0) sequences_.erase(id);
}

EngineStats Engine::stats() const {
  EngineStats s;
  plinth_error err = make_error();
  plinth_sched_stats ss{};
  ss.struct_size = sizeof(ss);
  check(plugins_.scheduler.vtable->get_stats(plugins_.scheduler.instance, &ss, &err), err,
        "scheduler.get_stats");
  s.num_running = ss.num_running;
  s.num_waiting = ss.num_waiting;
  s.num_preemptions = ss.num_preemptions;
  s.kv.struct_size = sizeof(s.kv);
  check(plugins_.kv_cache.vtable->get_stats(plugins_.kv_cache.instance, &s.kv, &err), err,
        "kv_cache.get_stats");
  s.num_steps = num_steps_;
  s.num_computed_tokens = num_computed_tokens_;
  s.num_graph_steps = num_graph_steps_;
  if (speculation_) {
    s.has_speculator = true;
    s.spec = speculation_->stats();
  }
  if (forced_) s.forced = forced_->stats();
  return s;
}

}  // namespace plinth
