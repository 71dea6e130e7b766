#pragma once
// OpenAI-style API errors: an HTTP status plus the JSON body
//   {"error": {"message": ..., "type": ..., "param": ..., "code": ...}}
// (https://platform.openai.com/docs/guides/error-codes). Handlers throw ApiError; the HTTP session
// turns it into the response.

#include <stdexcept>
#include <string>

namespace plinth::server {

class ApiError : public std::runtime_error {
 public:
  /// `status`: the HTTP status (400, 401, 404, 413, 422, 429, 503 ...). `type`: OpenAI's error type
  /// ("invalid_request_error", "authentication_error", "not_found_error", "rate_limit_error",
  /// "server_error"). `param`: the request field at fault, "" when none.
  ApiError(int status, std::string type, const std::string& message, std::string param = {},
           std::string code = {})
      : std::runtime_error(message),
        status_(status),
        type_(std::move(type)),
        param_(std::move(param)),
        code_(std::move(code)) {}

  int status() const { return status_; }
  const std::string& type() const { return type_; }
  const std::string& param() const { return param_; }
  const std::string& code() const { return code_; }
  /// The JSON body.
  std::string body() const;

  /// 400: a field's value is out of range or inconsistent.
  static ApiError invalid(const std::string& param, const std::string& message) {
    return {400, "invalid_request_error", message, param};
  }
  /// 422: the body is JSON but a field has the wrong type or a required one is missing.
  static ApiError unprocessable(const std::string& param, const std::string& message) {
    return {422, "invalid_request_error", message, param};
  }

 private:
  int status_;
  std::string type_, param_, code_;
};

}  // namespace plinth::server
