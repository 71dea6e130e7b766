#pragma once
// The output line of one finished prompts-file request: plinth's result object, or for an OpenAI
// batch line OpenAI's batch output object
// (https://platform.openai.com/docs/api-reference/batch/request-output):
//   {"id": "batch_req_<index>", "custom_id", "response": {"status_code": 200, "request_id",
//    "body": <the chat.completion / text_completion object the server answers>}, "error": null}

#include <cstdint>
#include <span>
#include <vector>

#include <nlohmann/json.hpp>

#include "cli/batch_input.hpp"
#include "engine/engine.hpp"
#include "server/async_engine.hpp"
#include "tokenizer/tokenizer.hpp"

namespace plinth::cli {

/// The logprobs of `seq`'s sampled tokens (one per token, its alternatives most likely first),
/// as the server reports them. Empty when the request asked for none.
std::vector<server::TokenLogprob> token_logprobs(const Sequence& seq, const Tokenizer& tok);

/// plinth's line: with one choice, result_json (generate_report.hpp) plus "custom_id" (when the
/// input had one) and "logprobs" ([{"token", "logprob", "top_logprobs": [{"token", "logprob"}]}],
/// when asked); with several (n > 1 or a prompt array), {"index", "custom_id", "choices": [those
/// objects, "index" = choice index]}. (A plinth line has no best_of / echo: one sequence per
/// choice.) `choices`: the finished sequences, prompt index × n +
/// sample index.
nlohmann::json plain_result_line(const BatchItem& item, std::span<const Sequence* const> choices,
                                 const Tokenizer& tok);

/// OpenAI's batch output line, the body built by the server's ResponseBuilder (so best_of and
/// echo answer as the server does). `choices`: every candidate, prompt index × max(n, best_of)
/// + candidate index. A failed choice makes the response what the server answers the same body:
/// status 400, {"error": {"message", "type": "invalid_request_error", "param": <the field>}}
/// when the request's own sampling parameter drove its logits non-finite
/// (Sequence::error_param()), else status 500, "type": "server_error" (a plugin broke its
/// contract, the model produced a non-finite row).
/// `created`: Unix seconds.
nlohmann::json openai_result_line(const BatchItem& item, std::span<const Sequence* const> choices,
                                  const Tokenizer& tok, int64_t created);

}  // namespace plinth::cli
