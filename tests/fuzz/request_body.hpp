// The request-body target's parse, shared with the HTTP target: parse_request over the shared
// tokenizer and chat template, with the accepted request's promises checked.
#pragma once

#include <string_view>

#include "server/request_parser.hpp"

namespace plinth::fuzz {

/// Parses `body` as `kind`; an ApiError is a normal outcome, anything else escapes (a crash).
void parse_body_checked(server::ApiKind kind, std::string_view body);

}  // namespace plinth::fuzz
