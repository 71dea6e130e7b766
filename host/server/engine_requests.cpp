#include "server/engine_requests.hpp"

#include <utility>

namespace plinth::server {

std::vector<GenerationRequest> engine_requests(const ApiRequest& api) {
  std::vector<GenerationRequest> out;
  out.reserve(api.num_candidates());
  const bool engine_logprobs = engine_reports_logprobs(api);
  for (const auto& prompt : api.prompts) {
    for (int32_t i = 0; i < api.candidates_per_prompt(); ++i) {
      GenerationRequest g;
      g.prompt = prompt;
      g.params = api.params;
      if (api.params.seed) g.params.seed = *api.params.seed + static_cast<uint64_t>(i);
      g.priority = api.priority;
      g.cache_salt = api.cache_salt;
      g.speculative = api.speculative;
      g.logprobs = engine_logprobs;
      g.grammar_trigger = api.grammar_trigger;
      g.share_prompt_with_previous = i > 0;
      out.push_back(std::move(g));
    }
  }
  return out;
}

}  // namespace plinth::server
