// The grammar plugin's engine (plugins/grammar_xgrammar): first byte = the constraint's kind
// (low 3 bits: JSON Schema, JSON object, regex, choice list, EBNF) and whitespace policy (bit 7:
// compact), then the spec up to a 0x00 byte, then one byte per step of a walk through the matcher
// over a 300-token vocabulary (every byte, some longer tokens, a control and a stop token).
// Compile either succeeds or throws CompileError. Each step checks the matcher's promises: a mask
// allows a token unless the matcher terminated; the stop token is allowed exactly when the matcher
// can end; every allowed text token agrees with the forced bytes (one is a prefix of the other);
// a token the mask allowed is accepted, a token it refused is refused (the matcher unchanged); a
// rollback gives back the mask of that earlier step. For a JSON Schema the slow reference matcher
// (tests/plugins/grammar_xgrammar/reference_json.hpp) must agree with the mask on the stop token
// and four text tokens per step, while the prefix is short (the reference re-parses it whole).
#include <algorithm>
#include <memory>
#include <string>
#include <vector>

#include "fuzz_support.hpp"
#include "fuzz_targets.hpp"
#include "grammar_engine.hpp"
#include "reference_json.hpp"

namespace plinth::fuzz {
namespace {

using grammar::CompileError;
using grammar::Engine;
using grammar::Matcher;

constexpr int32_t kStop = 256, kControl = 257;

grammar::Vocabulary fuzz_vocabulary() {
  grammar::Vocabulary v;
  for (int b = 0; b < 256; ++b) v.bytes.emplace_back(1, static_cast<char>(b));
  v.bytes.emplace_back("</s>");   // 256: the stop token
  v.bytes.emplace_back("<pad>");  // 257: control, never allowed
  for (const char* t :
       {"{\"", "\":",      "\",\"", "\"}",   "true", "false", "null", "  ", "\n  ", "12",
        "-0",  "0.5",      "e+",    "\\u00", "\\\"", "é",     "€",    "ab", "abc",  "[{",
        "}]",  "\"name\"", "\":\"", "http",  "://",  "2024-", "-02-", "29", "T12",  ":00Z"}) {
    v.bytes.emplace_back(t);
  }
  v.types.assign(v.bytes.size(), 1);
  v.types[kStop] = 3;
  v.types[kControl] = 3;
  v.stop_ids = {kStop};
  return v;
}

struct Shared {
  grammar::Vocabulary vocab = fuzz_vocabulary();
  Engine engine{vocab};
};

Shared& shared() {
  // Never destroyed: a compilation past its time limit may still run in the background at exit.
  static Shared* s = new Shared();
  return *s;
}

bool bit(const std::vector<uint32_t>& row, int32_t t) {
  return ((row[static_cast<size_t>(t) / 32] >> (static_cast<uint32_t>(t) % 32)) & 1u) != 0;
}

std::vector<uint32_t> mask(Matcher& m, const Engine& e) {
  std::vector<uint32_t> row(e.words_per_row());
  m.fill(row.data(), static_cast<uint32_t>(row.size()), e.vocab_size());
  return row;
}

void check_mask(const std::vector<uint32_t>& row, Matcher& m, const Shared& s,
                std::vector<int32_t>& allowed, std::vector<int32_t>& refused) {
  allowed.clear();
  refused.clear();
  for (int32_t t = 0; t < s.engine.vocab_size(); ++t)
    (bit(row, t) ? allowed : refused).push_back(t);
  if (m.terminated()) {
    crash_if(!allowed.empty(), "a terminated matcher's mask allows a token");
    return;
  }
  crash_if(allowed.empty(), "the mask allows no token before the matcher terminated");
  crash_if(bit(row, kControl), "the mask allows a control token");
  crash_if(bit(row, kStop) != m.can_end(),
           "the stop token is allowed where the matcher cannot end "
           "(or refused where it can)");
  const std::string forced = m.forced_bytes();
  for (int32_t t : allowed) {
    if (t == kStop) continue;
    const std::string& b = s.vocab.bytes[static_cast<size_t>(t)];
    const size_t n = std::min(b.size(), forced.size());
    crash_if(b.compare(0, n, forced, 0, n) != 0,
             "an allowed token disagrees with the forced bytes");
  }
}

/// The reference for a JSON Schema spec; null when it is another kind or outside the reference.
std::unique_ptr<grammar::testing::ReferenceJson> reference(grammar::SpecKind kind,
                                                           const std::string& spec, bool compact) {
  if (kind != grammar::SpecKind::kJsonSchema) return nullptr;
  try {
    return std::make_unique<grammar::testing::ReferenceJson>(
        grammar::prepare_json_schema(spec, false),
        grammar::testing::ReferenceJson::Options{.max_ws = compact ? 0 : 4});
  } catch (const std::exception&) {
    return nullptr;
  }
}

/// The reference's verdicts against the mask `row` after `prefix`: the stop token, and text
/// tokens picked by `seed`.
void check_reference(const grammar::testing::ReferenceJson& ref, const std::string& prefix,
                     const std::vector<uint32_t>& row, const Shared& s, uint32_t seed) {
  constexpr size_t kLongestPrefix = 64;
  if (prefix.size() > kLongestPrefix) return;
  crash_if(bit(row, kStop) != ref.complete(prefix),
           "the JSON Schema reference disagrees with the stop token's bit");
  for (uint32_t i = 0; i < 4; ++i) {
    auto t = static_cast<int32_t>((seed * 2654435761u + i * 97u) %
                                  static_cast<uint32_t>(s.engine.vocab_size()));
    if (t == kStop || t == kControl) t = '{';
    crash_if(bit(row, t) != ref.viable(prefix + s.vocab.bytes[static_cast<size_t>(t)]),
             "the JSON Schema reference disagrees with the mask");
  }
}

}  // namespace

void fuzz_grammar(const uint8_t* data, size_t size) {
  ByteReader in(data, size);
  if (in.empty()) return;
  const uint8_t head = in.byte();
  const auto kind = static_cast<grammar::SpecKind>(1 + (head & 7) % 5);
  const std::string spec = in.until(0);
  Shared& s = shared();
  grammar::CompileOptions options;
  options.compact = (head & 0x80) != 0;
  options.max_spec_bytes = 4096;
  options.timeout_ms = 2000;
  std::shared_ptr<const grammar::Compiled> g;
  try {
    g = s.engine.compile(kind, spec, options);
  } catch (const CompileError&) {
    return;
  }
  Matcher m(g);
  const auto ref = reference(kind, spec, options.compact);
  std::vector<int32_t> taken;                // the accepted tokens (for the reference's prefix)
  std::vector<std::vector<uint32_t>> masks;  // masks[d]: the mask at depth d
  std::vector<int32_t> allowed, refused;
  while (!in.empty() && !m.terminated()) {
    const uint8_t step = in.byte();
    std::vector<uint32_t> row = mask(m, s.engine);
    check_mask(row, m, s, allowed, refused);
    if (ref != nullptr && !m.terminated()) {
      std::string prefix;
      for (int32_t t : taken) prefix += s.vocab.bytes[static_cast<size_t>(t)];
      check_reference(*ref, prefix, row, s, step + 131u * m.depth());
    }
    if (masks.size() <= m.depth()) masks.resize(m.depth() + 1);
    masks[m.depth()] = row;
    if (step < 24 && m.depth() > 0) {  // roll back 1..depth tokens: the mask of then comes back
      const uint32_t n = 1 + step % m.depth();
      m.rollback(n);
      taken.resize(m.depth());
      crash_if(mask(m, s.engine) != masks[m.depth()], "a rollback did not restore the mask");
    } else if (step < 48 && !refused.empty()) {  // a refused token is refused, nothing changes
      const int32_t t = refused[in.byte() % refused.size()];
      crash_if(m.accept(t), "the matcher accepted a token its mask refused");
      crash_if(mask(m, s.engine) != row, "a refused token changed the matcher");
    } else {
      const int32_t t = allowed[step % allowed.size()];
      crash_if(!m.accept(t), "the matcher refused a token its mask allowed");
      taken.push_back(t);
    }
  }
}

}  // namespace plinth::fuzz

PLINTH_FUZZ_ENTRY(plinth::fuzz::fuzz_grammar)
