#pragma once
// Parsing of the OpenAI request bodies of POST /v1/completions and POST /v1/chat/completions
// (https://platform.openai.com/docs/api-reference/completions/create,
//  https://platform.openai.com/docs/api-reference/chat/create) into engine requests.
// Wrong types and missing required fields → ApiError 422; values out of range, a prompt over the
// context, an unknown model → 400 / 404. Unknown fields are ignored, as OpenAI and vLLM do.

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "sampling/sampling_params.hpp"

namespace plinth {
class EngineHost;
}

namespace plinth::server {

enum class ApiKind { completion, chat };

/// One parsed request: its prompts (token ids) and everything needed to answer it.
struct ApiRequest {
  ApiKind kind = ApiKind::completion;
  std::string model;
  /// Prompt token ids, one entry per prompt (completions accept a batch; chat has one).
  std::vector<std::vector<int32_t>> prompts;
  /// Shared by every choice; choice i of a seeded request gets seed + i.
  SamplingParams params;
  int32_t n = 1;  ///< choices per prompt
  bool stream = false;
  bool include_usage = false;  ///< stream_options.include_usage
  bool logprobs = false;       ///< return the sampled tokens' logprobs
  int32_t top_logprobs = 0;    ///< alternatives per token, 0..20
  int32_t priority = 0;        ///< lower runs first under the scheduler's priority policy
  std::string user;
  std::string cache_salt;  ///< prefix-cache namespace (vLLM's `cache_salt`); "" = shared
  /// plinth extension: false opts this request out of speculative decoding (default true; the
  /// output at temperature 0 is the same either way)
  bool speculative = true;

  /// Choices in the response: prompts.size() × n.
  size_t num_choices() const { return prompts.size() * static_cast<size_t>(n); }
};

struct ParseLimits {
  int32_t max_n = 16;             ///< n in [1, max_n]
  int32_t max_prompts = 64;       ///< completions: prompts in one request
  std::string served_model_name;  ///< what `model` must name (the model's own name also matches)
};

/// Parses a request body. Throws ApiError (400 malformed JSON, 422 wrong type / missing field,
/// 400 out of range or too long, 404 unknown model).
ApiRequest parse_request(ApiKind kind, std::string_view body, const EngineHost& host,
                         const ParseLimits& limits);

}  // namespace plinth::server
