#include "cli/generate_report.hpp"

#include <algorithm>
#include <string>

namespace plinth::cli {

nlohmann::json result_json(size_t index, const Sequence& seq) {
  const SequenceTimings& t = seq.timings();
  std::vector<int32_t> out(seq.output().begin(), seq.output().end());
  nlohmann::json j = {{"index", index},
                      {"text", seq.text()},
                      {"token_ids", out},
                      {"finish_reason", seq.finish_reason().value_or("")},
                      {"prompt_tokens", t.num_prompt_tokens},
                      {"generated_tokens", t.num_generated_tokens},
                      {"ttft_s", t.ttft()},
                      {"tpot_s", t.tpot()},
                      {"e2e_s", t.finished > 0 ? t.finished - t.arrival : 0.0}};
  if (!seq.error().empty()) j["error"] = seq.error();
  return j;
}

namespace {
double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}
}  // namespace

void print_summary(std::FILE* out, const Engine& engine, std::span<const uint64_t> ids,
                   const RunClock& clock) {
  uint64_t prompt = 0, generated = 0;
  std::vector<double> ttft, tpot;
  for (uint64_t id : ids) {
    const SequenceTimings& t = engine.find(id)->timings();
    prompt += t.num_prompt_tokens;
    generated += t.num_generated_tokens;
    if (t.num_generated_tokens > 0) ttft.push_back(t.ttft());
    if (t.num_generated_tokens > 1) tpot.push_back(t.tpot());
  }
  double secs = clock.seconds();
  EngineStats s = engine.stats();
  std::fprintf(out,
               "--\nrequests %zu | prompt tokens %llu | generated tokens %llu | wall %.2f s\n"
               "TTFT median %.1f ms | TPOT median %.1f ms | %.1f generated tokens/s | "
               "%llu steps, %llu preemptions\n",
               ids.size(), static_cast<unsigned long long>(prompt),
               static_cast<unsigned long long>(generated), secs, median(ttft) * 1e3,
               median(tpot) * 1e3, secs > 0 ? generated / secs : 0.0,
               static_cast<unsigned long long>(s.num_steps),
               static_cast<unsigned long long>(s.num_preemptions));
  if (s.has_speculator) {
    // vLLM's speculative decoding metrics: acceptance rate = accepted / draft tokens, mean
    // acceptance length = 1 + accepted / drafts.
    std::string per_position;
    for (uint64_t n : s.spec.accepted_per_position) {
      if (!per_position.empty()) per_position += ' ';
      per_position += std::to_string(n);
    }
    std::fprintf(out,
                 "speculative: %llu drafts, %llu draft tokens, %llu accepted | acceptance rate "
                 "%.3f | mean acceptance length %.2f | accepted per position [%s]\n",
                 static_cast<unsigned long long>(s.spec.num_drafts),
                 static_cast<unsigned long long>(s.spec.num_draft_tokens),
                 static_cast<unsigned long long>(s.spec.num_accepted_tokens),
                 s.spec.acceptance_rate(), s.spec.mean_acceptance_length(), per_position.c_str());
  }
  if (s.forced.num_drafts > 0) {
    // Forced-token drafting (structured outputs): the tokens of bytes a grammar forced.
    std::fprintf(out,
                 "forced drafts: %llu proposals, %llu draft tokens, %llu accepted | acceptance "
                 "rate %.3f | mean acceptance length %.2f\n",
                 static_cast<unsigned long long>(s.forced.num_drafts),
                 static_cast<unsigned long long>(s.forced.num_draft_tokens),
                 static_cast<unsigned long long>(s.forced.num_accepted_tokens),
                 s.forced.acceptance_rate(), s.forced.mean_acceptance_length());
  }
}

}  // namespace plinth::cli
