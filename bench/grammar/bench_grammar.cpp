// bench_grammar: the grammar plugin's engine (plugins/grammar_xgrammar) over a folder of
// JSONSchemaBench / MaskBench files, without a model (as MaskBench does), on a model's vocabulary
// (SmolLM2's 49,152 tokens by default).
//
// Each file is {"schema", "tests": [{"valid", "data"}]}. Per schema: compile time (or the refusal
// and the keyword it names); per test instance: the instance serialized compactly (no whitespace,
// non-ASCII escaped as \uXXXX, as the bounded whitespace policy allows; object members in the
// order the grammar writes them, the schema's: member_order.hpp), tokenized with the model's
// tokenizer and fed token by token: before each token the mask is filled (timed) and must allow it,
// then the matcher accepts it; at the end the matcher must be able to end. A valid instance must
// pass all of that; an invalid one must fail somewhere. Prints compile and mask percentiles, the
// counts, and the refusals by keyword; --list-failures names each file with a wrong verdict.
// Exit status 3 when any invalid instance is accepted or a mask refuses a token the matcher
// accepts.
#include <CLI/CLI.hpp>
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "grammar_engine.hpp"
#include "member_order.hpp"
#include "model/gguf.hpp"
#include "tokenizer/tokenizer.hpp"

namespace {

using Clock = std::chrono::steady_clock;
namespace fs = std::filesystem;
using plinth::grammar::CompileError;
using plinth::grammar::Engine;
using plinth::grammar::Matcher;

double since_us(Clock::time_point t0) {
  return std::chrono::duration<double, std::micro>(Clock::now() - t0).count();
}

double percentile(std::vector<double> v, double p) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const auto i = static_cast<size_t>(std::lround(p * static_cast<double>(v.size() - 1)));
  return v[std::min(i, v.size() - 1)];
}

/// "/properties/a/multipleOf" -> "multipleOf"; messages without a pointer -> their start.
std::string refusal_key(const CompileError& e) {
  const std::string& p = e.pointer();
  if (p.empty()) return std::string(e.what()).substr(0, 60);
  const size_t slash = p.rfind('/');
  std::string last = p.substr(slash + 1);
  if (!last.empty() && std::all_of(last.begin(), last.end(), ::isdigit) && slash > 0) {
    const size_t prev = p.rfind('/', slash - 1);
    last = p.substr(prev + 1, slash - prev - 1);
  }
  return last;
}

struct Verdict {
  bool accepted = false;
  bool contract_broken = false;  // a mask refused a token the matcher then accepted
  size_t tokens_taken = 0;       // tokens the matcher accepted before it refused one or the end
};

Verdict run_instance(Engine& engine, const std::shared_ptr<const plinth::grammar::Compiled>& g,
                     const std::vector<int32_t>& tokens, std::vector<double>& mask_us) {
  Matcher m(g);
  std::vector<uint32_t> row(engine.words_per_row());
  Verdict v;
  for (int32_t t : tokens) {
    const auto t0 = Clock::now();
    m.fill(row.data(), static_cast<uint32_t>(row.size()), engine.vocab_size());
    mask_us.push_back(since_us(t0));
    const bool allowed = ((row[static_cast<size_t>(t) / 32] >> (t % 32)) & 1u) != 0;
    const bool ok = m.accept(t);
    if (ok != allowed) v.contract_broken = true;
    if (!ok) return v;
    ++v.tokens_taken;
  }
  v.accepted = m.can_end();
  return v;
}

struct Options {
  std::string data_dir, model = "models/SmolLM2-135M-Instruct.Q4_1.gguf", dump_dir;
  size_t limit = 0, stride = 1;
  bool list_failures = false, compact = false, strict = false, subset_only = false;
  bool compile_only = false, byte_vocab = false, keep_order = false;
  uint32_t timeout_ms = 10000;
  plinth::grammar::EngineConfig engine;
};

/// The token bytes and types of `tok`, and its EOS as the stop id.
plinth::grammar::Vocabulary vocabulary_of(const plinth::Tokenizer& tok) {
  plinth::grammar::Vocabulary vocab;
  for (int32_t i = 0; i < tok.vocab_size(); ++i) {
    vocab.bytes.push_back(tok.token_to_bytes(i));
    vocab.types.push_back(static_cast<int32_t>(tok.token_type(i)));
  }
  if (tok.eos_id() >= 0) vocab.stop_ids.push_back(tok.eos_id());
  return vocab;
}

/// The *.json files of o.data_dir in name order, every o.stride-th, at most o.limit (0 = all).
std::vector<fs::path> bench_files(const Options& o) {
  std::vector<fs::path> files;
  for (const auto& e : fs::directory_iterator(o.data_dir)) {
    if (e.path().extension() == ".json") files.push_back(e.path());
  }
  std::sort(files.begin(), files.end());
  std::vector<fs::path> picked;
  for (size_t i = 0; i < files.size(); i += o.stride) picked.push_back(files[i]);
  if (o.limit != 0 && picked.size() > o.limit) picked.resize(o.limit);
  return picked;
}

/// What the run counts: compile and mask times, refusals by keyword, verdicts per instance.
struct Tally {
  std::vector<double> compile_ms, mask_us;
  std::map<std::string, int> refused_by;
  int compiled = 0, refused = 0, valid_ok = 0, valid_rejected = 0, invalid_ok = 0,
      invalid_accepted = 0, contract = 0;

  void verdict(bool valid, const Verdict& v) {
    if (v.contract_broken) ++contract;
    if (valid) {
      ++(v.accepted ? valid_ok : valid_rejected);
    } else {
      ++(v.accepted ? invalid_accepted : invalid_ok);
    }
  }

  void print() const {
    const int total = compiled + refused;
    std::printf("files %d: compiled %d (%.1f%%), refused %d\n", total, compiled,
                total != 0 ? 100.0 * compiled / total : 0.0, refused);
    std::printf("compile ms: p50 %.2f p90 %.2f p99 %.2f max %.2f\n", percentile(compile_ms, 0.5),
                percentile(compile_ms, 0.9), percentile(compile_ms, 0.99),
                percentile(compile_ms, 1.0));
    std::printf("mask us (%zu masks): p50 %.1f p90 %.1f p99 %.1f max %.1f\n", mask_us.size(),
                percentile(mask_us, 0.5), percentile(mask_us, 0.9), percentile(mask_us, 0.99),
                percentile(mask_us, 1.0));
    const int valid = valid_ok + valid_rejected, invalid = invalid_ok + invalid_accepted;
    std::printf("valid instances %d: rejected %d (%.2f%%)\n", valid, valid_rejected,
                valid != 0 ? 100.0 * valid_rejected / valid : 0.0);
    std::printf("invalid instances %d: accepted %d\n", invalid, invalid_accepted);
    std::printf("mask / accept disagreements: %d\n", contract);
    std::vector<std::pair<int, std::string>> by;
    by.reserve(refused_by.size());
    for (const auto& [k, n] : refused_by) by.emplace_back(n, k);
    std::sort(by.rbegin(), by.rend());
    std::printf("refused by keyword:");
    for (const auto& [n, k] : by) std::printf(" %s %d;", k.c_str(), n);
    std::printf("\n");
  }
};

/// A wrong verdict: the file and instance, and for a valid one where the matcher refused it (the
/// text it took, then the token it refused or "end").
void print_failure(const fs::path& path, const plinth::Tokenizer& tok, const std::string& text,
                   const std::vector<int32_t>& tokens, bool valid, const Verdict& v) {
  std::printf("%s %s: %s\n", valid ? "VALID-REJECTED" : "INVALID-ACCEPTED", path.filename().c_str(),
              text.substr(0, 200).c_str());
  if (!valid) return;
  size_t at = 0;
  for (size_t i = 0; i < v.tokens_taken; ++i) at += tok.token_to_bytes(tokens[i]).size();
  const size_t from = at > 80 ? at - 80 : 0;
  std::printf(
      "  refused at byte %zu: ...%s[[%s]]\n", at, text.substr(from, at - from).c_str(),
      v.tokens_taken < tokens.size() ? tok.token_to_bytes(tokens[v.tokens_taken]).c_str() : "end");
}

/// One JSONSchemaBench file: its schema compiled (or refused), each test instance fed token by
/// token and judged against its label.
void bench_file(const fs::path& path, Engine& engine, const plinth::Tokenizer& tok,
                const plinth::grammar::CompileOptions& opts, const Options& o, Tally& t) {
  const bool list_failures = o.list_failures;
  nlohmann::ordered_json doc;  // member order kept: the grammar follows the schema's order
  try {
    std::ifstream in(path);
    doc = nlohmann::ordered_json::parse(in);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%s: %s\n", path.filename().c_str(), e.what());
    return;
  }
  const std::string spec = doc.at("schema").dump();
  std::shared_ptr<const plinth::grammar::Compiled> g;
  const auto t0 = Clock::now();
  try {
    if (o.subset_only || !o.dump_dir.empty()) {  // the rewrite and the subset check alone
      const std::string rewritten = plinth::grammar::prepare_json_schema(spec, opts.strict);
      if (!o.dump_dir.empty()) {
        std::ofstream(fs::path(o.dump_dir) / path.filename()) << rewritten << "\n";
      }
      if (o.subset_only) {
        ++t.compiled;
        return;
      }
    }
    g = engine.compile(plinth::grammar::SpecKind::kJsonSchema, spec, opts);
  } catch (const CompileError& e) {
    ++t.refused;
    ++t.refused_by[refusal_key(e)];
    if (list_failures) std::printf("REFUSED %s: %s\n", path.filename().c_str(), e.what());
    // A compilation past its limit goes on in the background: let it finish (up to a minute)
    // so that it does not slow down the next ones.
    engine.wait_idle(60000);
    return;
  }
  t.compile_ms.push_back(since_us(t0) / 1000.0);
  ++t.compiled;
  if (o.compile_only) return;
  // Members in the order the grammar writes them (the schema's): the same JSON value.
  const auto rewritten =
      nlohmann::ordered_json::parse(plinth::grammar::prepare_json_schema(spec, opts.strict));
  for (const auto& test : doc.value("tests", nlohmann::ordered_json::array())) {
    const bool valid = test.at("valid").get<bool>();
    nlohmann::ordered_json data = test.at("data");
    if (!o.keep_order) plinth::grammar::order_members_like_schema(data, rewritten);
    const std::string text = data.dump(-1, ' ', true);
    std::vector<int32_t> tokens;
    try {
      tokens = tok.encode(text, false);
    } catch (const std::exception&) {
      continue;  // a byte the vocabulary cannot spell
    }
    const Verdict v = run_instance(engine, g, tokens, t.mask_us);
    t.verdict(valid, v);
    if (list_failures && v.accepted != valid) print_failure(path, tok, text, tokens, valid, v);
  }
}

int run(const Options& o) {
  auto file = plinth::GgufFile::open(o.model);
  const plinth::Tokenizer tok = plinth::Tokenizer::from_gguf(*file);
  plinth::grammar::Vocabulary vocab = vocabulary_of(tok);
  if (o.byte_vocab) {  // the 256 single bytes and the stop id: compile cost without the vocabulary
    plinth::grammar::Vocabulary bytes;
    for (int b = 0; b < 256; ++b) bytes.bytes.emplace_back(1, static_cast<char>(b));
    bytes.bytes.emplace_back("</s>");
    bytes.types.assign(bytes.bytes.size(), 1);
    bytes.types.back() = 3;
    bytes.stop_ids = {256};
    vocab = std::move(bytes);
  }
  Engine engine(vocab, o.engine);
  plinth::grammar::CompileOptions opts;
  opts.compact = o.compact;
  opts.strict = o.strict;
  opts.timeout_ms = o.timeout_ms;
  Tally t;
  for (const fs::path& path : bench_files(o)) {
    bench_file(path, engine, tok, opts, o, t);
  }
  t.print();
  return (t.invalid_accepted != 0 || t.contract != 0) ? 3 : 0;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    CLI::App app{
        "bench_grammar: grammar engine compile / mask times and correctness over "
        "JSONSchemaBench files"};
    Options o;
    app.add_option("--data", o.data_dir, "folder of JSONSchemaBench *.json files")->required();
    app.add_option("--model", o.model, "GGUF whose vocabulary and tokenizer to use");
    app.add_option("--limit", o.limit, "at most this many files (0 = all), in name order");
    app.add_option("--stride", o.stride, "take every stride-th file in name order (a sample)")
        ->check(CLI::PositiveNumber);
    app.add_flag("--list-failures", o.list_failures,
                 "print each file with a wrong verdict or refused");
    app.add_flag("--compact", o.compact, "compact whitespace policy instead of bounded");
    app.add_option("--compile-timeout-ms", o.timeout_ms,
                   "refuse a schema whose compilation takes longer");
    app.add_flag("--subset-only", o.subset_only,
                 "only rewrite and check each schema against the enforced subset (no compilation, "
                 "no instances): the refusals by keyword in seconds");
    app.add_option("--dump-rewritten", o.dump_dir,
                   "write each schema the subset accepts, as rewritten for the engine, into this "
                   "folder under its file name (bench/grammar/check_rewrite.py compares them)");
    app.add_flag("--compile-only", o.compile_only, "compile the schemas, feed no instances");
    app.add_flag("--byte-vocab", o.byte_vocab,
                 "compile against a 257-token vocabulary (each byte, a stop token) instead of the "
                 "model's: with --compile-only, the compile time that does not depend on the "
                 "vocabulary");
    size_t mask_cache_mib = o.engine.mask_cache_bytes >> 20;
    app.add_option("--mask-cache-mib", mask_cache_mib,
                   "XGrammar's rule-level token-mask cache across compilations, MiB (0 = off)");
    app.add_flag("--lazy-masks", o.engine.lazy_masks,
                 "XGrammar's dynamic compilation: each mask computed on its first use");
    app.add_option("--compile-threads", o.engine.compile_threads,
                   "threads one compilation uses (XGrammar's max_threads)")
        ->check(CLI::Range(1, 64));
    app.add_flag("--keep-member-order", o.keep_order,
                 "feed each instance's object members in the file's order, not in the order the "
                 "grammar writes them (the schema's)");
    app.add_flag("--strict", o.strict, "absent additionalProperties = false (OpenAI strict)");
    CLI11_PARSE(app, argc, argv);
    o.engine.mask_cache_bytes = mask_cache_mib << 20;
    if (o.byte_vocab) o.compile_only = true;  // instances are tokenized with the model's vocabulary
    return run(o);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "bench_grammar: %s\n", e.what());
    return 1;
  }
}
