#include "cli/batch_output.hpp"

#include <string>

#include "cli/generate_report.hpp"
#include "server/response_builder.hpp"

namespace plinth::cli {

using nlohmann::json;

std::vector<server::TokenLogprob> token_logprobs(const Sequence& seq, const Tokenizer& tok) {
  std::vector<server::TokenLogprob> out;
  for (const Sampler::Result& s : seq.samples()) {
    server::TokenLogprob lp;
    lp.token = s.token;
    lp.text = tok.decode(std::span<const int32_t>(&s.token, 1));
    lp.logprob = s.logprob;
    for (const auto& [id, logprob] : s.top_logprobs) {
      lp.top.emplace_back(tok.decode(std::span<const int32_t>(&id, 1)), logprob);
    }
    out.push_back(std::move(lp));
  }
  return out;
}

namespace {

json choice_json(size_t index, const Sequence& seq, bool logprobs, const Tokenizer& tok) {
  json j = result_json(index, seq);
  if (logprobs) {
    json arr = json::array();
    for (const server::TokenLogprob& t : token_logprobs(seq, tok)) {
      json top = json::array();
      for (const auto& [text, lp] : t.top) {
        top.push_back({{"token", server::logprob_token(text)}, {"logprob", lp}});
      }
      arr.push_back({{"token", server::logprob_token(t.text)},
                     {"logprob", t.logprob},
                     {"top_logprobs", top}});
    }
    j["logprobs"] = std::move(arr);
  }
  return j;
}

}  // namespace

json plain_result_line(const BatchItem& item, std::span<const Sequence* const> choices,
                       const Tokenizer& tok) {
  json j;
  if (choices.size() == 1) {
    j = choice_json(item.index, *choices[0], item.api.logprobs, tok);
  } else {
    json arr = json::array();
    for (size_t i = 0; i < choices.size(); ++i) {
      arr.push_back(choice_json(i, *choices[i], item.api.logprobs, tok));
    }
    j = {{"index", item.index}, {"choices", std::move(arr)}};
  }
  if (!item.custom_id.empty()) j["custom_id"] = item.custom_id;
  // Through dump_json's U+FFFD replacement: a text cut inside a character stays writable.
  return json::parse(server::dump_json(j));
}

json openai_result_line(const BatchItem& item, std::span<const Sequence* const> choices,
                        const Tokenizer& tok, int64_t created) {
  const std::string request_id = (item.api.kind == server::ApiKind::kChat ? "chatcmpl-" : "cmpl-") +
                                 std::to_string(created) + "-" + std::to_string(item.index);
  std::vector<std::string> echo_texts;
  if (item.api.echo) {
    for (const auto& prompt : item.api.prompts) echo_texts.push_back(tok.decode(prompt, true));
  }
  server::ResponseBuilder builder(item.api, request_id, created, std::move(echo_texts));
  const bool logprobs = item.api.logprobs || item.api.best_of > item.api.n;
  for (size_t i = 0; i < choices.size(); ++i) {
    const Sequence& seq = *choices[i];
    server::StreamEvent ev;
    ev.text_delta = seq.text();
    ev.token_ids.assign(seq.output().begin(), seq.output().end());
    ev.trigger_offset = seq.trigger_text_offset();  // a grammar trigger (Mistral Nemo's auto)
    if (logprobs) ev.logprobs = token_logprobs(seq, tok);
    ev.finished = true;
    ev.finish_reason = seq.finish_reason().value_or("stop");
    ev.error = seq.error();
    // The request's own parameter drove its logits non-finite: its fault, a 400 naming it, as
    // the server answers the same body; else a plugin's or the model's: 500.
    ev.error_param = seq.error_param();
    ev.error_status = ev.error_param.empty() ? 500 : 400;
    ev.num_prompt_tokens = seq.timings().num_prompt_tokens;
    ev.num_generated_tokens = seq.timings().num_generated_tokens;
    builder.on_event(i, ev);
  }
  json response;
  if (builder.error().empty()) {
    response = {
        {"status_code", 200}, {"request_id", request_id}, {"body", json::parse(builder.body())}};
  } else {
    const int status = builder.error_status();
    response = {
        {"status_code", status},
        {"request_id", request_id},
        {"body",
         {{"error",
           {{"message", builder.error()},
            {"type", status == 400 ? "invalid_request_error" : "server_error"},
            {"param", builder.error_param().empty() ? json(nullptr) : json(builder.error_param())},
            {"code", nullptr}}}}}};
  }
  return {{"id", "batch_req_" + std::to_string(item.index)},
          {"custom_id", item.custom_id},
          {"response", std::move(response)},
          {"error", nullptr}};
}

}  // namespace plinth::cli
