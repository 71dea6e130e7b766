// bench_grammar: the grammar plugin's engine (plugins/grammar_xgrammar) over a folder of
// JSONSchemaBench / MaskBench files, without a model (as MaskBench does), on a model's vocabulary
// (SmolLM2's 49,152 tokens by default).
//
// Each file is {"schema", "tests": [{"valid", "data"}]}. Per schema: compile time (or the refusal
// and the keyword it names); per test instance: the instance serialized compactly (no whitespace,
// non-ASCII escaped as \uXXXX, as the bounded whitespace policy allows), tokenized with the model's
// tokenizer and fed token by token: before each token the mask is filled (timed) and must allow it,
// then the matcher accepts it; at the end the matcher must be able to end. A valid instance must
// pass all of that; an invalid one must fail somewhere. Prints compile and mask percentiles, the
// counts, and the refusals by keyword; --list-failures names each file with a wrong verdict.
// Exit status 3 when any invalid instance is accepted or a mask refuses a token the matcher
// accepts.
#include <CLI/CLI.hpp>
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "grammar_engine.hpp"
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
  const auto i = static_cast<size_t>(p * static_cast<double>(v.size() - 1) + 0.5);
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
  }
  v.accepted = m.can_end();
  return v;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{
      "bench_grammar: grammar engine compile / mask times and correctness over "
      "JSONSchemaBench files"};
  std::string data_dir, model = "models/SmolLM2-135M-Instruct.Q4_1.gguf";
  size_t limit = 0;
  bool list_failures = false, compact = false, strict = false;
  app.add_option("--data", data_dir, "folder of JSONSchemaBench *.json files")->required();
  app.add_option("--model", model, "GGUF whose vocabulary and tokenizer to use");
  app.add_option("--limit", limit, "at most this many files (0 = all), in name order");
  size_t stride = 1;
  app.add_option("--stride", stride, "take every stride-th file in name order (a sample)")
      ->check(CLI::PositiveNumber);
  app.add_flag("--list-failures", list_failures, "print each file with a wrong verdict or refused");
  app.add_flag("--compact", compact, "compact whitespace policy instead of bounded");
  uint32_t timeout_ms = 10000;
  app.add_option("--compile-timeout-ms", timeout_ms,
                 "refuse a schema whose compilation takes longer");
  app.add_flag("--strict", strict, "absent additionalProperties = false (OpenAI strict)");
  CLI11_PARSE(app, argc, argv);

  auto file = plinth::GgufFile::open(model);
  const plinth::Tokenizer tok = plinth::Tokenizer::from_gguf(*file);
  plinth::grammar::Vocabulary vocab;
  for (int32_t i = 0; i < tok.vocab_size(); ++i) {
    vocab.bytes.push_back(tok.token_to_bytes(i));
    vocab.types.push_back(static_cast<int32_t>(tok.token_type(i)));
  }
  if (tok.eos_id() >= 0) vocab.stop_ids.push_back(tok.eos_id());
  Engine engine(vocab);
  plinth::grammar::CompileOptions opts;
  opts.compact = compact;
  opts.strict = strict;
  opts.timeout_ms = timeout_ms;

  std::vector<fs::path> files;
  for (const auto& e : fs::directory_iterator(data_dir)) {
    if (e.path().extension() == ".json") files.push_back(e.path());
  }
  std::sort(files.begin(), files.end());
  if (stride > 1) {
    std::vector<fs::path> every;
    for (size_t i = 0; i < files.size(); i += stride) every.push_back(files[i]);
    files.swap(every);
  }
  if (limit != 0 && files.size() > limit) files.resize(limit);

  std::vector<double> compile_ms, mask_us;
  std::map<std::string, int> refused_by;
  int compiled = 0, refused = 0, valid_ok = 0, valid_rejected = 0, invalid_ok = 0,
      invalid_accepted = 0, contract = 0;
  for (const fs::path& path : files) {
    nlohmann::ordered_json doc;  // member order kept: the grammar follows the schema's order
    try {
      std::ifstream in(path);
      doc = nlohmann::ordered_json::parse(in);
    } catch (const std::exception& e) {
      std::fprintf(stderr, "%s: %s\n", path.filename().c_str(), e.what());
      continue;
    }
    const std::string spec = doc.at("schema").dump();
    std::shared_ptr<const plinth::grammar::Compiled> g;
    const auto t0 = Clock::now();
    try {
      g = engine.compile(plinth::grammar::SpecKind::kJsonSchema, spec, opts);
    } catch (const CompileError& e) {
      ++refused;
      ++refused_by[refusal_key(e)];
      if (list_failures) std::printf("REFUSED %s: %s\n", path.filename().c_str(), e.what());
      // A compilation past its limit goes on in the background: let it finish (up to a minute)
      // so that it does not slow down the next ones.
      engine.wait_idle(60000);
      continue;
    }
    compile_ms.push_back(since_us(t0) / 1000.0);
    ++compiled;
    for (const auto& test : doc.value("tests", nlohmann::ordered_json::array())) {
      const bool valid = test.at("valid").get<bool>();
      const std::string text = test.at("data").dump(-1, ' ', true);
      std::vector<int32_t> tokens;
      try {
        tokens = tok.encode(text, false);
      } catch (const std::exception&) {
        continue;  // a byte the vocabulary cannot spell
      }
      const Verdict v = run_instance(engine, g, tokens, mask_us);
      if (v.contract_broken) ++contract;
      if (valid && v.accepted) ++valid_ok;
      if (valid && !v.accepted) ++valid_rejected;
      if (!valid && !v.accepted) ++invalid_ok;
      if (!valid && v.accepted) ++invalid_accepted;
      if (list_failures && v.accepted != valid) {
        std::printf("%s %s: %s\n", valid ? "VALID-REJECTED" : "INVALID-ACCEPTED",
                    path.filename().c_str(), text.substr(0, 200).c_str());
      }
    }
  }
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
  for (const auto& [k, n] : refused_by) by.emplace_back(n, k);
  std::sort(by.rbegin(), by.rend());
  std::printf("refused by keyword:");
  for (const auto& [n, k] : by) std::printf(" %s %d;", k.c_str(), n);
  std::printf("\n");
  return (invalid_accepted != 0 || contract != 0) ? 3 : 0;
}
