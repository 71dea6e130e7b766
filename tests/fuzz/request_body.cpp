// OpenAI body parser: the first byte picks /v1/completions (even) or /v1/chat/completions (odd),
// the rest is the body. Rejections must be ApiError with a 4xx status; an accepted request must
// have in-vocabulary prompts that fit the context with max_tokens.
#include "request_body.hpp"

#include <string>
#include <vector>

#include "fuzz_support.hpp"
#include "fuzz_targets.hpp"
#include "server/api_error.hpp"

namespace plinth::fuzz {
namespace {

// The served model as parse_request sees it: the shared tokenizer and chat template, SmolLM2's
// context of 8192.
class FuzzModel final : public server::RequestModel {
 public:
  FuzzModel() : m_(shared_model()) {
    if (m_.tokenizer->eos_id() >= 0) stop_ids_.push_back(m_.tokenizer->eos_id());
  }
  std::vector<int32_t> encode(std::string_view text) const override {
    return m_.tokenizer->encode(text, true);
  }
  std::vector<int32_t> encode_chat(const std::vector<ChatMessage>& messages,
                                   const ChatTemplate::RenderOptions& options) const override {
    std::vector<Tokenizer::Segment> segments;
    for (const ChatTemplate::Segment& s : m_.chat->render(messages, true, options)) {
      segments.push_back({s.text, s.special});
    }
    return m_.tokenizer->encode_segments(segments, true);
  }
  int64_t vocab_size() const override { return m_.tokenizer->vocab_size(); }
  int64_t context_length() const override { return 8192; }
  const std::string& model_name() const override { return name_; }
  const std::vector<int32_t>& stop_token_ids() const override { return stop_ids_; }

 private:
  const SharedModel& m_;
  std::string name_ = "SmolLM2-135M-Instruct";
  std::vector<int32_t> stop_ids_;
};

}  // namespace

void parse_body_checked(server::ApiKind kind, std::string_view body) {
  static const FuzzModel model;
  server::ParseLimits limits;
  limits.served_model_name = "plinth";
  server::ApiRequest r;
  try {
    r = server::parse_request(kind, body, model, limits);
  } catch (const server::ApiError& e) {
    crash_if(e.status() < 400 || e.status() > 499, "an ApiError outside 4xx");
    return;
  }
  crash_if(r.prompts.empty() || r.n < 1 || r.n > limits.max_n, "prompt or n count out of range");
  for (const auto& p : r.prompts) {
    crash_if(p.empty(), "an empty prompt accepted");
    for (const int32_t id : p) crash_if(id < 0 || id >= model.vocab_size(), "id outside vocab");
    crash_if(static_cast<int64_t>(p.size()) + r.params.max_tokens > model.context_length(),
             "prompt + max_tokens over the context");
  }
  crash_if(r.params.max_tokens < 1, "max_tokens below 1");
}

void fuzz_request_body(const uint8_t* data, size_t size) {
  if (size == 0) return;
  const auto kind = data[0] % 2 == 0 ? server::ApiKind::kCompletion : server::ApiKind::kChat;
  parse_body_checked(kind, std::string_view(reinterpret_cast<const char*>(data + 1), size - 1));
}

}  // namespace plinth::fuzz

PLINTH_FUZZ_ENTRY(plinth::fuzz::fuzz_request_body)
