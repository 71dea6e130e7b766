// grammar_xgrammar — the plugin library's one exported symbol: the grammar table over the engine
// of grammar_engine.hpp (XGrammar's C++ core).
#include <plinth/grammar.h>
#include <plinth/plugin.hpp>

#include <algorithm>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>

#include "grammar_engine.hpp"

namespace {

using plinth::grammar::Engine;
using plinth::grammar::Matcher;
using plinth::sdk::guard;
using plinth::sdk::set_error;

constexpr const char* kConfigSchema = R"json({
  "type": "object",
  "properties": {
    "compile_timeout_ms": {"type": "integer", "minimum": 0, "maximum": 600000, "default": 10000,
      "description": "refuse a constraint whose compilation takes longer (0: no limit)"},
    "max_spec_bytes": {"type": "integer", "minimum": 1, "maximum": 16777216, "default": 1048576,
      "description": "refuse a longer spec"},
    "compile_threads": {"type": "integer", "minimum": 1, "maximum": 64, "default": 1,
      "description": "threads one compilation uses for its token masks (XGrammar's max_threads)"},
    "mask_cache_mib": {"type": "integer", "minimum": 0, "maximum": 65536, "default": 64,
      "description": "MiB of rule token masks kept across compilations (XGrammar); 0: off"},
    "lazy_masks": {"type": "boolean", "default": false,
      "description": "token masks computed on first use (engine thread), not at compile"}
  },
  "additionalProperties": false
})json";

struct Plugin {
  std::unique_ptr<Engine> engine;
  uint32_t timeout_ms = 10000;
  uint32_t max_spec_bytes = 1u << 20;
  plinth::sdk::Host host;
};

// The handles the host sees: a grammar is a heap-held shared_ptr, a matcher the Matcher itself.
struct GrammarHandle {
  std::shared_ptr<const plinth::grammar::Compiled> compiled;
};

Plugin& plugin(plinth_instance* inst) {
  return *reinterpret_cast<Plugin*>(inst);
}
Matcher& matcher(plinth_grammar_matcher* m) {
  return *reinterpret_cast<Matcher*>(m);
}

plinth::grammar::Vocabulary read_vocab(const plinth_grammar_vocab* v) {
  if (v == nullptr || v->tokens == nullptr || v->vocab_size == 0) {
    throw std::invalid_argument(
        "grammar_xgrammar: create needs the vocabulary (plinth_create_args.vocab, ABI 1.4)");
  }
  plinth::grammar::Vocabulary out;
  out.bytes.reserve(v->vocab_size);
  out.types.reserve(v->vocab_size);
  for (uint32_t i = 0; i < v->vocab_size; ++i) {
    const plinth_grammar_token& t = v->tokens[i];
    out.bytes.emplace_back(t.bytes != nullptr ? std::string(t.bytes, t.num_bytes) : std::string());
    out.types.push_back(t.type);
  }
  if (v->stop_ids != nullptr) out.stop_ids.assign(v->stop_ids, v->stop_ids + v->num_stop_ids);
  return out;
}

int32_t create(const plinth_create_args* args, plinth_instance** out, plinth_error* err) {
  if (args == nullptr || out == nullptr) {
    return set_error(err, PLINTH_ERR_INVALID_ARGUMENT, "create: args and out must not be NULL");
  }
  return guard(err, [&] {
    // NOLINTNEXTLINE(bugprone-sizeof-expression): the field is a pointer, its size is meant
    if (!PLINTH_HAS_FIELD(args, plinth_create_args, vocab)) {
      throw std::invalid_argument("grammar_xgrammar needs a host of ABI 1.4 (create_args.vocab)");
    }
    auto p = std::make_unique<Plugin>();
    const auto config =
        nlohmann::json::parse(args->config_json != nullptr ? args->config_json : "{}");
    p->timeout_ms = config.value("compile_timeout_ms", 10000u);
    p->max_spec_bytes = config.value("max_spec_bytes", 1u << 20);
    p->host = plinth::sdk::Host(args->host, "grammar_xgrammar");
    plinth::grammar::EngineConfig engine_config;
    engine_config.compile_threads = config.value("compile_threads", 1);
    engine_config.mask_cache_bytes = config.value("mask_cache_mib", size_t{64}) << 20;
    engine_config.lazy_masks = config.value("lazy_masks", false);
    p->engine = std::make_unique<Engine>(read_vocab(args->vocab), engine_config);
    *out = reinterpret_cast<plinth_instance*>(p.release());
  });
}

void destroy(plinth_instance* inst) {
  delete reinterpret_cast<Plugin*>(inst);
}

int32_t compile(plinth_instance* inst, int32_t kind, const char* spec, size_t spec_len,
                const plinth_grammar_options* options, plinth_grammar** out, plinth_error* err) {
  if (out == nullptr || (spec == nullptr && spec_len != 0)) {
    return set_error(err, PLINTH_ERR_INVALID_ARGUMENT, "compile: out and spec must not be NULL");
  }
  if (kind < 1 || kind > 6) {
    return set_error(err, PLINTH_ERR_UNSUPPORTED,
                     "compile: unknown grammar kind " + std::to_string(kind));
  }
  return guard(err, [&] {
    Plugin& p = plugin(inst);
    plinth::grammar::CompileOptions o;
    if (options != nullptr) {
      o.compact = options->whitespace == PLINTH_GRAMMAR_WS_COMPACT;
      o.max_whitespace = options->max_whitespace != 0 ? options->max_whitespace : 4;
      o.strict = options->strict != 0;
      o.max_spec_bytes = options->max_spec_bytes != 0 ? options->max_spec_bytes : 0;
    }
    if (o.max_spec_bytes == 0 || o.max_spec_bytes > p.max_spec_bytes) {
      o.max_spec_bytes = p.max_spec_bytes;
    }
    o.timeout_ms = p.timeout_ms;
    auto h = std::make_unique<GrammarHandle>();
    h->compiled = p.engine->compile(static_cast<plinth::grammar::SpecKind>(kind),
                                    std::string_view(spec != nullptr ? spec : "", spec_len), o);
    *out = reinterpret_cast<plinth_grammar*>(h.release());
  });
}

void release_grammar(plinth_instance*, plinth_grammar* g) {
  delete reinterpret_cast<GrammarHandle*>(g);
}

int32_t matcher_create(plinth_instance*, plinth_grammar* g, plinth_grammar_matcher** out,
                       plinth_error* err) {
  if (g == nullptr || out == nullptr) {
    return set_error(err, PLINTH_ERR_INVALID_ARGUMENT,
                     "matcher_create: grammar and out must not be NULL");
  }
  return guard(err, [&] {
    auto m = std::make_unique<Matcher>(reinterpret_cast<GrammarHandle*>(g)->compiled);
    *out = reinterpret_cast<plinth_grammar_matcher*>(m.release());
  });
}

void matcher_destroy(plinth_instance*, plinth_grammar_matcher* m) {
  delete reinterpret_cast<Matcher*>(m);
}

int32_t fill_bitmask(plinth_instance* inst, plinth_grammar_matcher* const* matchers, uint32_t num,
                     uint32_t* bitmask, uint32_t words_per_row, plinth_error* err) {
  Plugin& p = plugin(inst);
  if (num != 0 && (matchers == nullptr || bitmask == nullptr)) {
    return set_error(err, PLINTH_ERR_INVALID_ARGUMENT, "fill_bitmask: NULL arrays");
  }
  if (words_per_row < p.engine->words_per_row()) {
    return set_error(
        err, PLINTH_ERR_INVALID_ARGUMENT,
        "fill_bitmask: words_per_row " + std::to_string(words_per_row) +
            " is below ceil(vocab_size / 32) = " + std::to_string(p.engine->words_per_row()));
  }
  return guard(err, [&] {
    for (uint32_t i = 0; i < num; ++i) {
      matcher(matchers[i])
          .fill(bitmask + static_cast<size_t>(i) * words_per_row, words_per_row,
                p.engine->vocab_size());
    }
  });
}

int32_t accept(plinth_instance* inst, plinth_grammar_matcher* m, int32_t token,
               int32_t* out_accepted, plinth_error* err) {
  if (m == nullptr || out_accepted == nullptr) {
    return set_error(err, PLINTH_ERR_INVALID_ARGUMENT, "accept: NULL matcher or out");
  }
  if (token < 0 || token >= plugin(inst).engine->vocab_size()) {
    return set_error(err, PLINTH_ERR_INVALID_ARGUMENT,
                     "accept: token " + std::to_string(token) + " is outside the vocabulary");
  }
  return guard(err, [&] { *out_accepted = matcher(m).accept(token) ? 1 : 0; });
}

int32_t rollback(plinth_instance*, plinth_grammar_matcher* m, uint32_t n, plinth_error* err) {
  if (m == nullptr) return set_error(err, PLINTH_ERR_INVALID_ARGUMENT, "rollback: NULL matcher");
  return guard(err, [&] { matcher(m).rollback(n); });
}

int32_t can_end(plinth_instance*, plinth_grammar_matcher* m) {
  return m != nullptr && matcher(m).can_end() ? 1 : 0;
}

int32_t is_terminated(plinth_instance*, plinth_grammar_matcher* m) {
  return m != nullptr && matcher(m).terminated() ? 1 : 0;
}

int32_t forced_bytes(plinth_instance*, plinth_grammar_matcher* m, char* buf, size_t capacity,
                     size_t* out_len, plinth_error* err) {
  if (m == nullptr || out_len == nullptr || (buf == nullptr && capacity != 0)) {
    return set_error(err, PLINTH_ERR_INVALID_ARGUMENT, "forced_bytes: NULL arguments");
  }
  return guard(err, [&] {
    const std::string s = matcher(m).forced_bytes();
    const size_t n = s.size() < capacity ? s.size() : capacity;
    std::copy_n(s.data(), n, buf);
    *out_len = n;
  });
}

int32_t get_stats(plinth_instance* inst, plinth_grammar_stats* out, plinth_error* err) {
  if (out == nullptr) return set_error(err, PLINTH_ERR_INVALID_ARGUMENT, "get_stats: NULL out");
  return guard(err, [&] {
    const auto s = plugin(inst).engine->stats();
    plinth_grammar_stats v{};
    v.struct_size = sizeof v;
    v.num_compiles = s.compiles;
    v.num_cache_hits = s.cache_hits;
    v.num_refused = s.refused;
    plinth::sdk::write_out(out, v);
  });
}

constexpr plinth_grammar_vtable make_table() {
  plinth_grammar_vtable v{};
  v.struct_size = sizeof(plinth_grammar_vtable);
  v.lifecycle.struct_size = sizeof(plinth_lifecycle);
  v.lifecycle.create = create;
  v.lifecycle.destroy = destroy;
  v.lifecycle.get_extension = nullptr;
  v.compile = compile;
  v.release_grammar = release_grammar;
  v.matcher_create = matcher_create;
  v.matcher_destroy = matcher_destroy;
  v.fill_bitmask = fill_bitmask;
  v.accept = accept;
  v.rollback = rollback;
  v.can_end = can_end;
  v.is_terminated = is_terminated;
  v.forced_bytes = forced_bytes;
  v.get_stats = get_stats;
  return v;
}

const plinth_grammar_vtable kTable = make_table();

}  // namespace

PLINTH_PLUGIN("grammar_xgrammar", "0.1.0", PLINTH_KIND_GRAMMAR,
              "structured outputs: JSON Schema, regex, choice and EBNF constraints compiled by "
              "XGrammar 0.2.9's C++ core; token bitmasks per sequence",
              kConfigSchema, &kTable)
