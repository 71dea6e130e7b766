#pragma once
// The engine requests one parsed OpenAI request turns into: what the server submits and what
// `plinth generate --prompts-file` submits, so both run a request the same way.

#include <vector>

#include "engine/engine.hpp"
#include "server/request_parser.hpp"

namespace plinth::server {

/// Whether the engine must report logprobs for `api`: the client asked, or best_of must rank
/// candidates by them.
inline bool engine_reports_logprobs(const ApiRequest& api) {
  return api.logprobs || api.best_of > api.n;
}

/// prompts.size() × candidates_per_prompt() requests, prompt-major: candidate i of a prompt gets
/// seed + i when the request is seeded, and shares its prompt's KV with candidate 0
/// (share_prompt_with_previous for i > 0); logprobs = engine_reports_logprobs(api). Pure; never
/// throws except std::bad_alloc.
std::vector<GenerationRequest> engine_requests(const ApiRequest& api);

}  // namespace plinth::server
