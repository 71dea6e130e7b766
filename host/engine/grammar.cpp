#include "engine/grammar.hpp"

#include <algorithm>
#include <chrono>

namespace plinth {

namespace {
plinth_error fresh_error() {
  plinth_error e{};
  e.struct_size = sizeof e;
  return e;
}
double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}
}  // namespace

CompiledGrammar::~CompiledGrammar() {
  if (ref_ && g_ != nullptr) ref_.vtable->release_grammar(ref_.instance, g_);
}

std::shared_ptr<CompiledGrammar> GrammarCompiler::compile(const GrammarSpec& spec) const {
  if (!ref_) {
    throw GrammarSpecError(
        "response_format and structured_outputs are not supported by this pipeline: it has no "
        "grammar plugin; use a manifest with one (manifests/cpu_structured.json)");
  }
  plinth_grammar_options o{};
  o.struct_size = sizeof o;
  o.whitespace = spec.compact ? PLINTH_GRAMMAR_WS_COMPACT : PLINTH_GRAMMAR_WS_BOUNDED;
  o.max_whitespace = 4;
  o.strict = spec.strict ? 1 : 0;
  plinth_grammar* g = nullptr;
  plinth_error err = fresh_error();
  const auto t0 = std::chrono::steady_clock::now();
  const int32_t status = ref_.vtable->compile(ref_.instance, spec.kind, spec.spec.data(),
                                              spec.spec.size(), &o, &g, &err);
  if (metrics_) metrics_->on_compile(seconds_since(t0), stats());
  if (status == PLINTH_ERR_INVALID_ARGUMENT || status == PLINTH_ERR_UNSUPPORTED) {
    throw GrammarSpecError(err.message);
  }
  if (status != PLINTH_OK || g == nullptr) {
    throw GrammarContractError(name_ + ".compile failed: " + std::string(err.message));
  }
  return std::make_shared<CompiledGrammar>(ref_, g, name_, metrics_);
}

plinth_grammar_stats GrammarCompiler::stats() const {
  plinth_grammar_stats s{};
  s.struct_size = sizeof s;
  if (!ref_) return s;
  plinth_error err = fresh_error();
  if (ref_.vtable->get_stats(ref_.instance, &s, &err) != PLINTH_OK) {
    plinth_grammar_stats zero{};
    zero.struct_size = sizeof zero;
    return zero;
  }
  return s;
}

SequenceGrammar::SequenceGrammar(std::shared_ptr<CompiledGrammar> grammar, uint32_t vocab_size)
    : grammar_(std::move(grammar)),
      ref_(grammar_->ref()),
      name_(grammar_->plugin_name()),
      mask_((static_cast<size_t>(vocab_size) + 31) / 32) {
  plinth_error err = fresh_error();
  if (ref_.vtable->matcher_create(ref_.instance, grammar_->get(), &m_, &err) != PLINTH_OK ||
      m_ == nullptr) {
    throw GrammarContractError(name_ + ".matcher_create failed: " + std::string(err.message));
  }
}

SequenceGrammar::~SequenceGrammar() {
  if (m_ != nullptr) ref_.vtable->matcher_destroy(ref_.instance, m_);
}

const std::vector<uint32_t>& SequenceGrammar::fill() {
  plinth_error err = fresh_error();
  plinth_grammar_matcher* const ms[1] = {m_};
  const auto t0 = std::chrono::steady_clock::now();
  const int32_t status = ref_.vtable->fill_bitmask(ref_.instance, ms, 1, mask_.data(),
                                                   static_cast<uint32_t>(mask_.size()), &err);
  if (GrammarMetrics* metrics = grammar_->metrics()) metrics->on_mask(seconds_since(t0));
  if (status != PLINTH_OK) {
    throw GrammarContractError(name_ + ".fill_bitmask failed: " + std::string(err.message));
  }
  if (std::all_of(mask_.begin(), mask_.end(), [](uint32_t w) { return w == 0; })) {
    throw GrammarContractError(name_ +
                               ".fill_bitmask broke its contract (plinth/grammar.h): the mask row "
                               "of a sequence allows no token");
  }
  return mask_;
}

void SequenceGrammar::accept(int32_t token) {
  if (!try_accept(token)) {
    throw GrammarContractError(name_ + ".accept broke its contract (plinth/grammar.h): token " +
                               std::to_string(token) + " was allowed by its mask, then refused");
  }
}

bool SequenceGrammar::try_accept(int32_t token) {
  int32_t ok = 0;
  plinth_error err = fresh_error();
  if (ref_.vtable->accept(ref_.instance, m_, token, &ok, &err) != PLINTH_OK) {
    throw GrammarContractError(name_ + ".accept failed: " + std::string(err.message));
  }
  return ok != 0;
}

void SequenceGrammar::rollback(uint32_t n) {
  plinth_error err = fresh_error();
  if (ref_.vtable->rollback(ref_.instance, m_, n, &err) != PLINTH_OK) {
    throw GrammarContractError(name_ + ".rollback failed: " + std::string(err.message));
  }
}

std::string SequenceGrammar::forced_bytes(size_t capacity) {
  if (!PLINTH_HAS_FIELD(ref_.vtable, plinth_grammar_vtable, forced_bytes) ||
      ref_.vtable->forced_bytes == nullptr || capacity == 0) {
    return {};
  }
  std::string buf(capacity, '\0');
  size_t len = 0;
  plinth_error err = fresh_error();
  if (ref_.vtable->forced_bytes(ref_.instance, m_, buf.data(), capacity, &len, &err) != PLINTH_OK) {
    throw GrammarContractError(name_ + ".forced_bytes failed: " + std::string(err.message));
  }
  if (len > capacity) {
    throw GrammarContractError(
        name_ + ".forced_bytes broke its contract (plinth/grammar.h): " + std::to_string(len) +
        " bytes for a buffer of " + std::to_string(capacity));
  }
  buf.resize(len);
  return buf;
}

bool SequenceGrammar::terminated() const {
  return ref_.vtable->is_terminated(ref_.instance, m_) != 0;
}

}  // namespace plinth
