#pragma once
// The lines of `plinth generate --prompts-file`: plinth's own prompt lines and OpenAI batch-file
// lines (https://platform.openai.com/docs/api-reference/batch/request-input), each turned into a
// parsed API request by the server's request parser (server/request_parser.hpp), so a line
// accepts every sampling key POST /v1/completions and /v1/chat/completions accept, with the same
// validation.

#include <cstddef>
#include <memory>
#include <string>
#include <unordered_map>

#include <nlohmann/json.hpp>

#include "server/request_parser.hpp"

namespace plinth {
class EngineHost;
}

namespace plinth::cli {

/// One request of a prompts file.
struct BatchItem {
  size_t index = 0;       ///< 0-based position among the file's requests (blank lines skipped)
  std::string where;      ///< "FILE:LINE: " (or "--prompt: "), the prefix of its messages
  std::string custom_id;  ///< the line's "custom_id", "" when it has none
  bool openai = false;    ///< an OpenAI batch line: the output line takes OpenAI's shape too
  server::ApiRequest api;
  /// The line's structured-output constraint (response_format / structured_outputs), compiled
  /// by the grammar plugin as the file is read; null when it asks for none.
  std::shared_ptr<CompiledGrammar> grammar;
};

/// What a plinth prompt line inherits from the command line.
struct LineDefaults {
  /// Request-body keys every plinth line starts from (the --max-tokens, --temperature ...
  /// options); the line's own keys replace them.
  nlohmann::json body = nlohmann::json::object();
  bool chat = false;   ///< --chat: a "prompt" goes through the chat template as a user message
  std::string system;  ///< --system: the system message of such a prompt ("" = none)
  /// Request key -> the command-line option that set it (`generate --prompt`: its messages name
  /// `--max-tokens`, not `key "max_tokens"`). A key not in it is named `key "K"` as in a file.
  std::unordered_map<std::string, std::string> option_of_key;
};

/// Parses one line. A plinth line is {"prompt": ...} or {"messages": [...]} plus any request
/// key of the server (max_tokens, temperature, top_p, top_k, min_p, presence_penalty,
/// frequency_penalty, repetition_penalty, seed, stop, stop_token_ids, min_tokens, ignore_eos,
/// include_stop_str_in_output, skip_special_tokens, logit_bias, truncate_prompt_tokens, n,
/// logprobs, top_logprobs, priority, cache_salt, speculative ...; not best_of / echo) and
/// "custom_id" (optional: a string); an unknown key is an error (a typo would otherwise be
/// ignored). An OpenAI batch line is {"custom_id", "method": "POST", "url":
/// "/v1/completions" | "/v1/chat/completions", "body": {...}} with custom_id required, a
/// non-empty string (OpenAI's Batch API); its body is read as the server reads it (the server's
/// defaults; unknown keys ignored, "model" ignored: the manifest's model answers every line).
/// Uniqueness across lines is the caller's (check_unique_custom_id).
/// `where`: "FILE:LINE: ", the prefix of every error (but one naming a key of
/// LineDefaults::option_of_key, which names that option instead). Throws std::invalid_argument
/// naming the line and, for a bad value, the key (e.g. `in.jsonl:3: key "temperature": temperature
/// = 5: must be in [0, 2]`).
BatchItem parse_batch_line(const std::string& line, const std::string& where,
                           const LineDefaults& defaults, const EngineHost& host);

/// Records `item`'s custom_id (none: nothing) as that of line `line_number`; throws
/// std::invalid_argument when an earlier line has it already, naming both lines
/// (`in.jsonl:5: key "custom_id": "req-1" is also the custom_id of line 2; each line needs its
/// own`), as OpenAI's Batch API refuses a file with duplicate custom_ids. `seen`: custom_id ->
/// its line number, kept by the caller across the file's lines.
void check_unique_custom_id(const BatchItem& item, size_t line_number,
                            std::unordered_map<std::string, size_t>& seen);

}  // namespace plinth::cli
