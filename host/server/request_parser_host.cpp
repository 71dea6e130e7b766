// parse_request over an EngineHost: the served model's tokenizer, chat template and config seen
// through RequestModel. Kept apart from request_parser.cpp so that the parser itself links
// without the engine (tests/fuzz/).
#include "app/engine_host.hpp"
#include "server/request_parser.hpp"

namespace plinth::server {
namespace {

class EngineHostModel final : public RequestModel {
 public:
  explicit EngineHostModel(const EngineHost& host) : host_(host) {}
  std::vector<int32_t> encode(std::string_view text) const override { return host_.encode(text); }
  std::vector<int32_t> encode_chat(const std::vector<ChatMessage>& messages,
                                   const ChatTemplate::RenderOptions& options) const override {
    return host_.encode_chat(messages, options);
  }
  int64_t vocab_size() const override { return host_.config().vocab_size; }
  int64_t context_length() const override { return host_.max_model_len(); }
  const std::string& model_name() const override { return host_.model_name(); }
  const std::vector<int32_t>& stop_token_ids() const override { return host_.stop_token_ids(); }
  ToolCallSyntax chat_tool_syntax() const override {
    return host_.chat_template() != nullptr ? host_.chat_template()->tool_call_syntax()
                                            : ToolCallSyntax::kNone;
  }
  std::optional<int32_t> special_token(std::string_view text) const override {
    const Tokenizer& tok = host_.tokenizer();
    const std::optional<int32_t> id = tok.find_token(text);
    if (id && tok.is_special(*id)) return id;
    return std::nullopt;
  }

 private:
  const EngineHost& host_;
};

}  // namespace

ApiRequest parse_request(ApiKind kind, std::string_view body, const EngineHost& host,
                         const ParseLimits& limits) {
  return parse_request(kind, body, EngineHostModel(host), limits);
}

}  // namespace plinth::server
