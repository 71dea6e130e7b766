#include "server/response_builder.hpp"

#include <algorithm>
#include <numeric>

#include "tokenizer/utf8.hpp"

namespace plinth::server {

using nlohmann::json;

std::string dump_json(const json& j) {
  return j.dump(-1, ' ', false, json::error_handler_t::replace);
}

std::string sse_frame(const std::string& payload) {
  return "data: " + payload + "\n\n";
}

std::string logprob_token(const std::string& text) {
  size_t i = 0;
  while (i < text.size()) {
    const utf8::Seq q = utf8::inspect(text, i);
    if (q.status != utf8::SeqStatus::kComplete) break;
    i += q.length;
  }
  if (i == text.size()) return text;
  static const char* const kHex = "0123456789abcdef";
  std::string out = "bytes:";
  for (unsigned char b : text) {
    out += "\\x";
    out += kHex[b >> 4];
    out += kHex[b & 15];
  }
  return out;
}

namespace {

bool is_continuation(char ch) {
  return (static_cast<unsigned char>(ch) & 0xC0) == 0x80;
}

// Unicode code points in UTF-8 bytes: the bytes that are not continuation bytes.
size_t count_chars(std::string_view s) {
  return static_cast<size_t>(
      std::count_if(s.begin(), s.end(), [](char ch) { return !is_continuation(ch); }));
}

// text_offset of each of tokens [0, to): the character (code point) index of the character its
// first byte belongs to, so a token that starts inside a character (a byte-level token) gets that
// character's offset, as OpenAI's, never one past it. An empty token (a special token's text
// skipped) takes the offset of the byte after it.
std::vector<size_t> char_offsets(const std::vector<TokenLogprob>& tokens, size_t to) {
  std::vector<size_t> offsets(to);
  size_t chars = 0;  // characters started before the current byte
  for (size_t i = 0; i < to; ++i) {
    // The token's first byte, or the next token's when it has none.
    char first = 0;
    for (size_t j = i; j < to && first == 0; ++j) {
      if (!tokens[j].text.empty()) first = tokens[j].text[0];
    }
    offsets[i] = chars > 0 && first != 0 && is_continuation(first) ? chars - 1 : chars;
    chars += count_chars(tokens[i].text);
  }
  return offsets;
}

}  // namespace

ResponseBuilder::ResponseBuilder(const ApiRequest& r, std::string id, int64_t created,
                                 std::vector<std::string> echo_texts)
    : kind_(r.kind),
      stream_(r.stream),
      include_usage_(r.include_usage),
      logprobs_(r.logprobs),
      id_(std::move(id)),
      model_(r.model),
      created_(created),
      choices_(r.num_candidates()),
      n_(static_cast<size_t>(r.n)),
      per_prompt_(static_cast<size_t>(r.candidates_per_prompt())),
      echo_(std::move(echo_texts)) {
  for (const auto& p : r.prompts) prompt_tokens_ += static_cast<uint32_t>(p.size());
  tools_ = r.kind == ApiKind::kChat && r.tools != nullptr;
  if (tools_) {
    content_forced_ =
        r.tools->choice == ToolChoice::kRequired || r.tools->choice == ToolChoice::kNamed;
    for (Choice& c : choices_) {
      c.tool_parser = make_tool_call_parser(*r.tools);
    }
  }
}

json ResponseBuilder::tool_delta(Choice& c, const std::vector<ToolEvent>& events) {
  std::string content;
  json calls = json::array();
  for (const ToolEvent& e : events) {
    c.tool_result.apply(e);
    switch (e.kind) {
      case ToolEvent::Kind::kContent:
        content += e.text;
        break;
      case ToolEvent::Kind::kCallStart:
        if (c.call_ids.size() <= e.index) c.call_ids.resize(e.index + 1);
        c.call_ids[e.index] = random_tool_id("call_");
        calls.push_back({{"index", e.index},
                         {"id", c.call_ids[e.index]},
                         {"type", "function"},
                         {"function", {{"name", e.text}, {"arguments", ""}}}});
        break;
      case ToolEvent::Kind::kArguments:
        if (!calls.empty() && calls.back()["index"] == e.index) {
          calls.back()["function"]["arguments"] =
              calls.back()["function"]["arguments"].get<std::string>() + e.text;
        } else {
          calls.push_back({{"index", e.index}, {"function", {{"arguments", e.text}}}});
        }
        break;
    }
  }
  json delta = json::object();
  if (!content.empty()) delta["content"] = content;
  if (!calls.empty()) delta["tool_calls"] = std::move(calls);
  return delta;
}

json ResponseBuilder::tool_message(const Choice& c) {
  const ToolCallResult& r = c.tool_result;
  json message = {{"role", "assistant"},
                  {"content", r.has_content ? json(r.content) : json(nullptr)}};
  json calls = json::array();
  for (size_t i = 0; i < r.calls.size() && i < c.call_ids.size(); ++i) {
    if (c.call_ids[i].empty()) continue;
    calls.push_back(
        {{"id", c.call_ids[i]},
         {"type", "function"},
         {"function", {{"name", r.calls[i].name}, {"arguments", r.calls[i].arguments}}}});
  }
  if (!calls.empty()) message["tool_calls"] = std::move(calls);
  return message;
}

std::string ResponseBuilder::tool_finish_reason(const Choice& c) {
  return c.finish_reason == "stop" && !c.tool_result.calls.empty() ? "tool_calls" : c.finish_reason;
}

json ResponseBuilder::usage() const {
  uint32_t completion = 0;
  for (const Choice& c : choices_) completion += c.completion_tokens;
  return {{"prompt_tokens", prompt_tokens_},
          {"completion_tokens", completion},
          {"total_tokens", prompt_tokens_ + completion}};
}

const std::string& ResponseBuilder::echo_of(size_t index) const {
  static const std::string kNone;
  const size_t prompt = index / per_prompt_;
  return prompt < echo_.size() ? echo_[prompt] : kNone;
}

size_t ResponseBuilder::num_visible(const Choice& c) {
  size_t start = 0, i = 0;
  for (; i < c.logprobs.size() && start < c.text.size(); ++i) start += c.logprobs[i].text.size();
  return i;
}

// The logprobs of choice tokens [from, to); offsets in characters, after `echo_chars`.
json ResponseBuilder::logprobs_json(const Choice& c, size_t from, size_t to,
                                    size_t echo_chars) const {
  if (kind_ == ApiKind::kCompletion) {
    const std::vector<size_t> char_offset = char_offsets(c.logprobs, to);
    json tokens = json::array(), token_logprobs = json::array(), top = json::array(),
         offsets = json::array();
    for (size_t i = from; i < to; ++i) {
      const TokenLogprob& t = c.logprobs[i];
      tokens.push_back(logprob_token(t.text));
      token_logprobs.push_back(t.logprob);
      json alt = json::object();
      for (const auto& [text, lp] : t.top) alt[logprob_token(text)] = lp;
      top.push_back(std::move(alt));
      offsets.push_back(echo_chars + char_offset[i]);
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
  for (size_t i = from; i < to; ++i) {
    const TokenLogprob& t = c.logprobs[i];
    json top = json::array();
    for (const auto& [text, lp] : t.top) {
      top.push_back({{"token", logprob_token(text)}, {"logprob", lp}, {"bytes", bytes(text)}});
    }
    content.push_back({{"token", logprob_token(t.text)},
                       {"logprob", t.logprob},
                       {"bytes", bytes(t.text)},
                       {"top_logprobs", top}});
  }
  return {{"content", content}};
}

json ResponseBuilder::chunk_base() const {
  json j = {{"id", id_},
            {"object", kind_ == ApiKind::kChat ? "chat.completion.chunk" : "text_completion"},
            {"created", created_},
            {"model", model_}};
  if (include_usage_) j["usage"] = nullptr;
  return j;
}

json ResponseBuilder::feed_tools(Choice& c, const StreamEvent& ev) {
  std::vector<ToolEvent> events;
  feed_reply(*c.tool_parser, ev.text_delta, ev.trigger_offset, ev.finished, events);
  return tool_delta(c, events);
}

void ResponseBuilder::finish_choice(Choice& c, const StreamEvent& ev) {
  c.finished = true;
  c.finish_reason = ev.finish_reason == "error" ? "abort" : ev.finish_reason;
  if (tools_) c.finish_reason = tool_finish_reason(c);
  if (ev.finish_reason == "error" && error_.empty()) {
    error_ = ev.error;
    error_status_ = ev.error_status;
    error_param_ = ev.error_param;
  }
  num_finished_++;
}

std::string ResponseBuilder::leading_frames(size_t index, Choice& c, const StreamEvent& ev) {
  std::string frames;
  if (ev.finish_reason == "error") {
    json err = {{"error",
                 {{"message", ev.error},
                  {"type", ev.error_status == 400 ? "invalid_request_error" : "server_error"},
                  {"param", ev.error_param.empty() ? json(nullptr) : json(ev.error_param)},
                  {"code", ev.error_status}}}};
    frames += sse_frame(dump_json(err));
  }
  if (kind_ == ApiKind::kChat && !c.role_sent) {
    json j = chunk_base();
    j["choices"] = json::array(
        {{{"index", index},
          {"delta",
           {{"role", "assistant"}, {"content", content_forced_ ? json(nullptr) : json("")}}},
          {"logprobs", nullptr},
          {"finish_reason", nullptr}}});
    frames += sse_frame(dump_json(j));
    c.role_sent = true;
  }
  return frames;
}

std::string ResponseBuilder::on_event(size_t index, const StreamEvent& ev) {
  Choice& c = choices_.at(index);
  if (c.finished) return {};
  c.text += ev.text_delta;
  for (const TokenLogprob& t : ev.logprobs) c.cumulative_logprob += t.logprob;
  if (logprobs_) c.logprobs.insert(c.logprobs.end(), ev.logprobs.begin(), ev.logprobs.end());
  c.completion_tokens = std::max(c.completion_tokens, ev.num_generated_tokens);
  json tool_json = tools_ ? feed_tools(c, ev) : json();
  if (ev.finished) finish_choice(c, ev);
  if (!stream_) return {};

  std::string frames = leading_frames(index, c, ev);
  const size_t lp_from = c.lp_sent;
  const size_t lp_to = logprobs_ ? num_visible(c) : lp_from;
  c.lp_sent = lp_to;
  const bool has_logprobs = lp_to > lp_from;
  std::string text_delta = ev.text_delta;
  if (!c.echo_sent) {
    text_delta = echo_of(index) + text_delta;
    c.echo_sent = true;
  }
  const bool nothing = tools_ ? tool_json.empty() : text_delta.empty();
  if (nothing && !ev.finished && !has_logprobs) return frames;
  json choice = {{"index", index}};
  if (tools_) {
    choice["delta"] = std::move(tool_json);
  } else if (kind_ == ApiKind::kChat) {
    choice["delta"] = text_delta.empty() ? json::object() : json{{"content", text_delta}};
  } else {
    choice["text"] = text_delta;
  }
  choice["logprobs"] =
      has_logprobs ? logprobs_json(c, lp_from, lp_to, count_chars(echo_of(index))) : json(nullptr);
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
  // Per prompt, its candidates ranked by cumulative logprob (stable: ties keep their order); the
  // first n are its choices. Without best_of, n = per_prompt_ and the order is kept.
  std::vector<size_t> order;
  for (size_t p = 0; p * per_prompt_ < choices_.size(); ++p) {
    std::vector<size_t> cand(per_prompt_);
    std::iota(cand.begin(), cand.end(), p * per_prompt_);
    if (per_prompt_ > n_) {
      std::stable_sort(cand.begin(), cand.end(), [&](size_t a, size_t b) {
        return choices_[a].cumulative_logprob > choices_[b].cumulative_logprob;
      });
    }
    order.insert(order.end(), cand.begin(), cand.begin() + static_cast<std::ptrdiff_t>(n_));
  }
  json choices = json::array();
  for (size_t i = 0; i < order.size(); ++i) {
    const Choice& c = choices_[order[i]];
    const std::string& echo = echo_of(order[i]);
    json choice = {{"index", i}};
    if (tools_) {
      choice["message"] = tool_message(c);
    } else if (kind_ == ApiKind::kChat) {
      choice["message"] = {{"role", "assistant"}, {"content", c.text}};
    } else {
      choice["text"] = echo + c.text;
    }
    choice["logprobs"] =
        logprobs_ ? logprobs_json(c, 0, num_visible(c), count_chars(echo)) : json(nullptr);
    choice["finish_reason"] = c.finish_reason;
    choices.push_back(std::move(choice));
  }
  json j = {{"id", id_},
            {"object", kind_ == ApiKind::kChat ? "chat.completion" : "text_completion"},
            {"created", created_},
            {"model", model_},
            {"choices", choices},
            {"usage", usage()}};
  return dump_json(j);
}

}  // namespace plinth::server
