#pragma once
// The tokenizer endpoints of the server (internal to host/server/), in both ecosystems' shapes:
//   POST /tokenize    vLLM  {"prompt": "..."} | {"messages": [...]}  (+ add_special_tokens,
//                           add_generation_prompt)
//                     llama.cpp {"content": "..."} (+ add_special)
//                     → {"tokens": [...], "count": N, "max_model_len": L}
//   POST /detokenize  {"tokens": [...]} → {"prompt": "...", "content": "..."} (the same text)
// Each answer carries the union of both servers' response keys, so either client reads it.
// Bad input (malformed JSON, wrong types, missing fields, token ids outside the vocabulary,
// invalid UTF-8) throws ApiError 400 naming the field; an unknown `model` throws 404.

#include <string>
#include <string_view>

namespace plinth {
class EngineHost;
}

namespace plinth::server {

/// Answers POST /tokenize: the JSON response body for request `body`. `served_model_name`: what an
/// optional `model` field must name (the model's own name also matches). Throws ApiError.
std::string tokenize_response(std::string_view body, const EngineHost& host,
                              const std::string& served_model_name);

/// Answers POST /detokenize: the JSON response body for request `body` (special tokens are kept
/// as their text, as vLLM and llama.cpp do). Throws ApiError.
std::string detokenize_response(std::string_view body, const EngineHost& host,
                                const std::string& served_model_name);

/// Decodes the %XX escapes of a URL path segment ("a%2Fb" → "a/b"); a malformed escape is kept as
/// it is.
std::string percent_decode(std::string_view s);

}  // namespace plinth::server
