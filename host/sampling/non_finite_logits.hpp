#pragma once
// The error a logits row no token can be drawn from raises (NaN, +inf, or -inf everywhere), with
// whom it belongs to: the request's own sampling parameter that drove the values there, or the
// model.

#include <stdexcept>
#include <string>

namespace plinth {

/// Thrown by Sampler (and by the engine for a backend's argmax id -1) when a logits row holds NaN
/// or +inf, or every logit is -inf. A std::invalid_argument, so callers that catch that still do.
/// The engine fails that request alone (Engine::step); the server answers 400 naming param() when
/// it is set, else 500 (the model produced the value).
class NonFiniteLogits : public std::invalid_argument {
 public:
  /// `param`: the sampling parameter whose transform made the value non-finite
  /// ("repetition_penalty", "min_tokens": the only ones that can within their validated ranges),
  /// or "" when the row was already non-finite as the model produced it. `what`: the message,
  /// naming the token, the value and the fix.
  NonFiniteLogits(std::string param, const std::string& what)
      : std::invalid_argument(what), param_(std::move(param)) {}

  /// The request's parameter at fault, or "" for the model's own value.
  const std::string& param() const { return param_; }

 private:
  std::string param_;
};

}  // namespace plinth
