#include "server/response_builder.hpp"

namespace plinth::server {

using nlohmann::json;

std::string dump_json(const json& j) {
  return j.dump(-1, ' ', false, json::error_handler_t::replace);
}

std::string sse_frame(const std::string& payload) {
  return "data: " + payload + "\n\n";
}

ResponseBuilder::ResponseBuilder(const ApiRequest& r, std::string id, int64_t created)
    : kind_(r.kind),
      stream_(r.stream),
      include_usage_(r.include_usage),
      logprobs_(r.logprobs),
      id_(std::move(id)),
      model_(r.model),
      created_(created),
      choices_(r.num_choices()) {
  for (const auto& p : r.prompts) prompt_tokens_ += static_cast<uint32_t>(p.size());
}

json ResponseBuilder::usage() const {
  uint32_t completion = 0;
  for (const Choice& c : choices_) completion += c.completion_tokens;
  return {{"prompt_tokens", prompt_tokens_},
          {"completion_tokens", completion},
          {"total_tokens", prompt_tokens_ + completion}};
}

// The logprobs of choice tokens [from, end); `text_offset`: characters of text before them.
json ResponseBuilder::logprobs_json(const Choice& c, size_t from, size_t text_offset) const {
  if (kind_ == ApiKind::completion) {
    json tokens = json::array(), token_logprobs = json::array(), top = json::array(),
         offsets = json::array();
    for (size_t i = from; i < c.logprobs.size(); ++i) {
      const TokenLogprob& t = c.logprobs[i];
      tokens.push_back(t.text);
      token_logprobs.push_back(t.logprob);
      json alt = json::object();
      for (const auto& [text, lp] : t.top) alt[text] = lp;
      top.push_back(std::move(alt));
      offsets.push_back(text_offset);
      text_offset += t.text.size();
    }
    return {{"tokens", tokens},
            {"token_logprobs", token_logprobs},
            {"top_logprobs", top},
            {"text_offset", offsets}};
  }
  auto bytes = [](const std::string& s) {
    json b = json::array();
    for (unsigned char ch : s) b.push_back(ch);
    return b;
  };
  json content = json::array();
  for (size_t i = from; i < c.logprobs.size(); ++i) {
    const TokenLogprob& t = c.logprobs[i];
    json top = json::array();
    for (const auto& [text, lp] : t.top) {
      top.push_back({{"token", text}, {"logprob", lp}, {"bytes", bytes(text)}});
    }
    content.push_back({{"token", t.text},
                       {"logprob", t.logprob},
                       {"bytes", bytes(t.text)},
                       {"top_logprobs", top}});
  }
  return {{"content", content}};
}

json ResponseBuilder::chunk_base() const {
  json j = {{"id", id_},
            {"object", kind_ == ApiKind::chat ? "chat.completion.chunk" : "text_completion"},
            {"created", created_},
            {"model", model_}};
  if (include_usage_) j["usage"] = nullptr;
  return j;
}

std::string ResponseBuilder::on_event(size_t index, const StreamEvent& ev) {
  Choice& c = choices_.at(index);
  if (c.finished) return {};
  size_t lp_from = c.logprobs.size();
  size_t text_offset = c.text.size();
  c.text += ev.text_delta;
  if (logprobs_) c.logprobs.insert(c.logprobs.end(), ev.logprobs.begin(), ev.logprobs.end());
  c.completion_tokens = std::max(c.completion_tokens, ev.num_generated_tokens);
  if (ev.finished) {
    c.finished = true;
    c.finish_reason = ev.finish_reason == "error" ? "abort" : ev.finish_reason;
    if (ev.finish_reason == "error" && error_.empty()) {
      error_ = ev.error;
      error_status_ = ev.error_status;
    }
    num_finished_++;
  }
  if (!stream_) return {};

  std::string frames;
  if (ev.finish_reason == "error") {
    json err = {{"error",
                 {{"message", ev.error},
                  {"type", ev.error_status == 400 ? "invalid_request_error" : "server_error"},
                  {"code", ev.error_status}}}};
    frames += sse_frame(dump_json(err));
  }
  bool has_logprobs = logprobs_ && c.logprobs.size() > lp_from;
  if (kind_ == ApiKind::chat && !c.role_sent) {
    json j = chunk_base();
    j["choices"] = json::array({{{"index", index},
                                 {"delta", {{"role", "assistant"}, {"content", ""}}},
                                 {"logprobs", nullptr},
                                 {"finish_reason", nullptr}}});
    frames += sse_frame(dump_json(j));
    c.role_sent = true;
  }
  if (ev.text_delta.empty() && !ev.finished && !has_logprobs) return frames;
  json choice = {{"index", index}};
  if (kind_ == ApiKind::chat) {
    choice["delta"] = ev.text_delta.empty() ? json::object() : json{{"content", ev.text_delta}};
  } else {
    choice["text"] = ev.text_delta;
  }
  choice["logprobs"] = has_logprobs ? logprobs_json(c, lp_from, text_offset) : json(nullptr);
  choice["finish_reason"] = ev.finished ? json(c.finish_reason) : json(nullptr);
  json j = chunk_base();
  j["choices"] = json::array({std::move(choice)});
  frames += sse_frame(dump_json(j));
  return frames;
}

std::string ResponseBuilder::stream_end() const {
  std::string frames;
  if (include_usage_) {
    json j = chunk_base();
    j["choices"] = json::array();
    j["usage"] = usage();
    frames += sse_frame(dump_json(j));
  }
  return frames + sse_frame("[DONE]");
}

std::string ResponseBuilder::body() const {
  json choices = json::array();
  for (size_t i = 0; i < choices_.size(); ++i) {
    const Choice& c = choices_[i];
    json choice = {{"index", i}};
    if (kind_ == ApiKind::chat) {
      choice["message"] = {{"role", "assistant"}, {"content", c.text}};
    } else {
      choice["text"] = c.text;
    }
    choice["logprobs"] = logprobs_ ? logprobs_json(c, 0, 0) : json(nullptr);
    choice["finish_reason"] = c.finish_reason;
    choices.push_back(std::move(choice));
  }
  json j = {{"id", id_},
            {"object", kind_ == ApiKind::chat ? "chat.completion" : "text_completion"},
            {"created", created_},
            {"model", model_},
            {"choices", choices},
            {"usage", usage()}};
  return dump_json(j);
}

}  // namespace plinth::server
