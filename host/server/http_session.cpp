#include "server/http_session.hpp"

#include <chrono>
#include <sstream>

#include <boost/asio/dispatch.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/write.hpp>

#include "app/engine_host.hpp"
#include "plinth/abi.h"
#include "runtime/host_context.hpp"
#include "server/anthropic_api.hpp"
#include "server/api_error.hpp"
#include "server/api_routes.hpp"
#include "server/engine_requests.hpp"
#include "server/tokenize_api.hpp"
#include "server/tool_envelope.hpp"

namespace plinth::server {

namespace beast = boost::beast;
namespace http = beast::http;
namespace net = boost::asio;

namespace {

const char* kJson = "application/json";

std::string error_body(const std::string& message, const std::string& type,
                       const std::string& param = {}, const std::string& code = {}) {
  nlohmann::json e = {{"message", message},
                      {"type", type},
                      {"param", param.empty() ? nlohmann::json(nullptr) : nlohmann::json(param)},
                      {"code", code.empty() ? nlohmann::json(nullptr) : nlohmann::json(code)}};
  return dump_json({{"error", e}});
}

int64_t unix_now() {
  using namespace std::chrono;
  return duration_cast<seconds>(system_clock::now().time_since_epoch()).count();
}

// The model object of GET /v1/models and GET /v1/models/{id}.
nlohmann::json model_object(const Server::State& state) {
  const EngineHost& host = state.engine.host();
  return {{"id", state.limits.served_model_name},
          {"object", "model"},
          {"created", unix_now()},
          {"owned_by", "plinth"},
          {"root", host.model_path().string()},
          {"max_model_len", host.max_model_len()}};
}

}  // namespace

std::string ApiError::body() const {
  return error_body(what(), type_, param_, code_);
}

HttpSession::HttpSession(net::ip::tcp::socket socket, std::shared_ptr<Server::State> state)
    : stream_(std::move(socket)),
      state_(std::move(state)),
      access_(state_->engine.context().logger(), state_->engine.context().metrics()) {}

HttpSession::~HttpSession() {
  state_->remove_session(this);
}

void HttpSession::start() {
  net::dispatch(stream_.get_executor(), [self = shared_from_this()] { self->do_read(); });
}

void HttpSession::drain() {
  net::post(stream_.get_executor(), [self = shared_from_this()] {
    self->keep_alive_ = false;
    if (!self->generating_ && !self->writing_ && !self->compiling_) self->shutdown();
  });
}

void HttpSession::close() {
  net::post(stream_.get_executor(), [self = shared_from_this()] {
    if (self->generating_ || self->compiling_) self->client_gone();
    self->shutdown();
  });
}

void HttpSession::abort_generation() {
  net::post(stream_.get_executor(), [self = shared_from_this()] {
    self->keep_alive_ = false;
    // The engine answers each abort with a finished event: on_event ends the response.
    for (uint64_t h : self->handles_) self->state_->engine.abort(h);
  });
}

void HttpSession::do_read() {
  if (closed_) return;
  if (state_->draining) keep_alive_ = false;
  parser_.emplace();
  parser_->body_limit(state_->options.body_limit);
  parser_->header_limit(static_cast<uint32_t>(state_->options.header_limit));
  response_complete_ = false;
  stream_.expires_after(state_->options.idle_timeout);
  http::async_read(
      stream_, buffer_, *parser_,
      [self = shared_from_this()](beast::error_code ec, size_t) { self->on_read(ec); });
}

void HttpSession::on_read(beast::error_code ec) {
  anthropic_errors_ = is_anthropic_route(std::string(parser_->get().target()));
  if (ec == http::error::end_of_stream || ec == net::error::operation_aborted ||
      ec == beast::error::timeout || ec == net::error::connection_reset || ec == net::error::eof) {
    return shutdown();
  }
  keep_alive_ = keep_alive_ && !state_->draining;
  if (ec == http::error::body_limit) {
    keep_alive_ = false;  // the rest of the body is still on the wire
    linger_ = true;
    return respond_error(413, error_body("the request body exceeds the limit of " +
                                             std::to_string(state_->options.body_limit) + " bytes",
                                         "invalid_request_error"));
  }
  if (ec == http::error::header_limit) {
    keep_alive_ = false;
    linger_ = true;
    return respond_error(431, error_body("the request line and headers exceed the limit of " +
                                             std::to_string(state_->options.header_limit) +
                                             " bytes; send fewer or shorter headers",
                                         "invalid_request_error"));
  }
  if (ec) {
    keep_alive_ = false;
    linger_ = true;
    return respond_error(400, error_body(std::string("malformed HTTP request: ") + ec.message(),
                                         "invalid_request_error"));
  }
  stream_.expires_never();
  Request req = parser_->release();
  keep_alive_ = keep_alive_ && req.keep_alive();
  handle(req);
}

void HttpSession::handle(const Request& req) {
  std::string target(req.target());
  if (auto q = target.find('?'); q != std::string::npos) target.resize(q);
  access_.begin(std::string(req.method_string()), target);
  anthropic_errors_ = is_anthropic_route(target);
  const ServerOptions& o = state_->options;
  try {
    if (target.rfind("/v1/", 0) == 0 && !o.api_key.empty()) {
      // OpenAI clients send "Authorization: Bearer KEY", Anthropic clients "x-api-key: KEY".
      auto auth = req.find(http::field::authorization);
      auto x_api_key = req.find("x-api-key");
      const bool ok = (auth != req.end() && auth->value() == "Bearer " + o.api_key) ||
                      (x_api_key != req.end() && x_api_key->value() == o.api_key);
      if (!ok) {
        throw ApiError(401, "authentication_error",
                       "missing or wrong API key; send \"Authorization: Bearer <key>\" or "
                       "\"x-api-key: <key>\"",
                       "", "invalid_api_key");
      }
    }
    auto method_is = [&](http::verb v) {
      if (req.method() != v) {
        throw ApiError(
            405, "invalid_request_error",
            "method " + std::string(req.method_string()) + " is not allowed on " + target);
      }
    };
    if (target == "/v1/completions" || target == "/v1/chat/completions") {
      method_is(http::verb::post);
      return start_generation(req,
                              target == "/v1/completions" ? ApiKind::kCompletion : ApiKind::kChat);
    }
    if (target == "/health") {
      method_is(http::verb::get);
      if (state_->draining) {
        return respond_error(503, error_body("the server is shutting down", "server_error"));
      }
      return respond(200, R"({"status":"ok"})", kJson);
    }
    if (target == "/metrics") {
      method_is(http::verb::get);
      return respond(200, state_->engine.context().metrics().render_prometheus(),
                     "text/plain; version=0.0.4; charset=utf-8");
    }
    if (target == "/v1/models") {
      method_is(http::verb::get);
      return respond(200, dump_json({{"object", "list"}, {"data", {model_object(*state_)}}}),
                     kJson);
    }
    if (constexpr std::string_view prefix = "/v1/models/"; target.rfind(prefix, 0) == 0) {
      method_is(http::verb::get);
      const std::string id = percent_decode(std::string_view(target).substr(prefix.size()));
      if (id != state_->limits.served_model_name) {
        throw ApiError(404, "not_found_error",
                       "The model `" + id + "` does not exist; this server serves `" +
                           state_->limits.served_model_name + "`",
                       "model", "model_not_found");
      }
      return respond(200, dump_json(model_object(*state_)), kJson);
    }
    if (target == "/tokenize") {
      method_is(http::verb::post);
      return respond(
          200,
          tokenize_response(req.body(), state_->engine.host(), state_->limits.served_model_name),
          kJson);
    }
    if (target == "/detokenize") {
      method_is(http::verb::post);
      return respond(
          200,
          detokenize_response(req.body(), state_->engine.host(), state_->limits.served_model_name),
          kJson);
    }
    if (target == "/version") {
      method_is(http::verb::get);
      return respond(200,
                     dump_json({{"version", PLINTH_VERSION},
                                {"abi", std::to_string(PLINTH_ABI_MAJOR) + "." +
                                            std::to_string(PLINTH_ABI_MINOR)}}),
                     kJson);
    }
    if (handle_extra_routes(req, target)) return;
    throw ApiError(404, "not_found_error",
                   "no route " + target +
                       " (try /v1/completions, /v1/chat/completions, /v1/messages, /v1/responses, "
                       "/v1/models, /tokenize, /detokenize, /version, /health, /metrics)");
  } catch (const ApiError& e) {
    respond_error(static_cast<unsigned>(e.status()), e.body());
  } catch (const nlohmann::json::exception& e) {
    respond_error(400,
                  error_body(std::string("invalid request: ") + e.what(), "invalid_request_error"));
  } catch (const std::exception& e) {  // the access log writes the 500's cause
    respond_error(500, error_body(e.what(), "server_error"));
  }
}

void HttpSession::start_generation(const Request& req, ApiKind kind) {
  ApiRequest api = parse_request(kind, req.body(), state_->engine.host(), state_->limits);
  std::vector<std::string> echo_texts;
  if (api.echo) {
    for (const auto& prompt : api.prompts) {
      echo_texts.push_back(state_->engine.host().tokenizer().decode(prompt, true));
    }
  }
  std::string id = (kind == ApiKind::kChat ? "chatcmpl-" : "cmpl-") + std::to_string(unix_now()) +
                   "-" + std::to_string(state_->next_id++);
  auto builder = std::make_unique<ResponseBuilder>(api, id, unix_now(), std::move(echo_texts));
  run_generation(api, std::move(builder), kind == ApiKind::kChat ? "max_tokens" : std::string());
}

void HttpSession::run_generation(const ApiRequest& api,
                                 std::unique_ptr<GenerationResponse> response,
                                 const std::string& max_tokens_field) {
  if (api.grammar) return compile_then_submit(api, std::move(response), max_tokens_field);
  submit_generation(api, std::move(response), max_tokens_field, nullptr);
}

// Structured outputs: the constraint is compiled (or found in the plugin's cache) on the grammar
// pool, off this network thread, before the request enters the engine; a refused one is the
// request's fault (400 naming the field and the plugin's JSON pointer). The plugin caps the
// compile time (its compile_timeout_ms). No read runs meanwhile: the next request on this
// connection waits for this one's response.
void HttpSession::compile_then_submit(const ApiRequest& api,
                                      std::unique_ptr<GenerationResponse> response,
                                      const std::string& max_tokens_field) {
  auto pending = std::make_shared<PendingGeneration>(
      PendingGeneration{api, std::move(response), max_tokens_field});
  auto on_done = [executor = stream_.get_executor(), self = shared_from_this(), pending](
                     std::shared_ptr<CompiledGrammar> grammar, std::exception_ptr error) mutable {
    // The session's references move into the handler: none stays on the worker.
    net::post(executor,
              [self = std::move(self), pending = std::move(pending), grammar = std::move(grammar),
               error = std::move(error)] { self->on_compiled(*pending, grammar, error); });
  };
  if (!state_->grammar_pool->submit(*api.grammar, std::move(on_done))) {
    return respond_error(429,
                         error_body(std::to_string(state_->options.max_grammar_compiles) +
                                        " output constraints are being compiled already; retry "
                                        "shortly",
                                    "rate_limit_error"),
                         {{"Retry-After", "1"}});
  }
  compiling_ = true;
}

void HttpSession::on_compiled(PendingGeneration& pending,
                              const std::shared_ptr<CompiledGrammar>& grammar,
                              const std::exception_ptr& error) {
  compiling_ = false;
  if (closed_) return;
  try {
    if (error) {
      try {
        std::rethrow_exception(error);
      } catch (const GrammarSpecError& e) {
        if (pending.api.tools) {
          throw tool_grammar_error(state_->engine.host().grammar(), *pending.api.tools, e.what());
        }
        throw ApiError::invalid(pending.api.grammar_param,
                                std::string("the output constraint was refused: ") + e.what());
      }
    }
    submit_generation(pending.api, std::move(pending.response), pending.max_tokens_field, grammar);
  } catch (const ApiError& e) {
    respond_error(static_cast<unsigned>(e.status()), e.body());
  } catch (const std::exception& e) {  // the access log writes the 500's cause
    respond_error(500, error_body(e.what(), "server_error"));
  }
}

void HttpSession::submit_generation(const ApiRequest& api,
                                    std::unique_ptr<GenerationResponse> response,
                                    const std::string& max_tokens_field,
                                    const std::shared_ptr<CompiledGrammar>& grammar) {
  std::vector<GenerationRequest> requests = engine_requests(api);
  for (GenerationRequest& g : requests) g.grammar = grammar;
  builder_ = std::move(response);
  choice_done_.assign(requests.size(), false);
  refusal_hint_.clear();
  if (!api.max_tokens_given && !max_tokens_field.empty()) {
    refusal_hint_ = " (the request gives no " + max_tokens_field +
                    ", so it defaults to the rest of the context, " +
                    std::to_string(api.params.max_tokens) + " tokens; pass a smaller " +
                    max_tokens_field + ")";
  }
  auto executor = stream_.get_executor();
  const uint64_t generation = ++generation_;
  try {
    handles_ = state_->engine.submit(
        std::move(requests),
        [executor, self = shared_from_this(), generation](size_t index, StreamEvent ev) {
          net::post(executor, [self, generation, index, ev = std::move(ev)] {
            self->on_event(generation, index, ev);
          });
        },
        engine_reports_logprobs(api));
  } catch (const Overloaded& e) {
    builder_.reset();
    if (e.draining()) {
      return respond_error(503, error_body(e.what(), "server_error"), {{"Retry-After", "5"}});
    }
    return respond_error(429, error_body(e.what(), "rate_limit_error"), {{"Retry-After", "1"}});
  }
  generating_ = true;
  // A stream's 200 head waits for the first event, so that a request the engine refuses at once
  // (one that can never fit the KV pool) gets its 400 like a non-streamed one.
  stream_head_pending_ = api.stream;
  watch();
}

void HttpSession::on_event(uint64_t generation, size_t index, const StreamEvent& event) {
  if (generation != generation_ || !builder_ || index >= choice_done_.size() ||
      choice_done_[index]) {
    return;
  }
  access_.on_event(index, event);
  if (stream_head_pending_) {
    if (event.finished && event.finish_reason == "error" && event.token_ids.empty()) {
      return fail_generation(static_cast<unsigned>(event.error_status), event.error,
                             event.error_param);
    }
    stream_head_pending_ = false;
    std::string head =
        "HTTP/1.1 200 OK\r\nServer: plinth\r\nContent-Type: text/event-stream\r\n"
        "Cache-Control: no-cache\r\nTransfer-Encoding: chunked\r\n";
    head += keep_alive_ ? "Connection: keep-alive\r\n\r\n" : "Connection: close\r\n\r\n";
    write(std::move(head));
  }
  std::string frames = builder_->on_event(index, event);
  if (event.finished) choice_done_[index] = true;
  if (!frames.empty() && !closed_) send_chunk(frames);
  if (builder_->done()) finish_generation();
}

void HttpSession::finish_generation() {
  generating_ = false;
  handles_.clear();
  std::unique_ptr<GenerationResponse> b = std::move(builder_);
  if (closed_) return;
  if (b->stream()) {
    send_chunk(b->stream_end());
    access_.end(200);
    response_complete_ = true;
    write("0\r\n\r\n");
  } else if (!b->error().empty()) {
    respond_generation_error(static_cast<unsigned>(b->error_status()), b->error(),
                             b->error_param());
  } else {
    respond(200, b->body(), kJson);
  }
}

void HttpSession::fail_generation(unsigned status, const std::string& message,
                                  const std::string& param) {
  for (uint64_t h : handles_) state_->engine.abort(h);  // the other choices; finished ones: no-op
  ++generation_;                                        // their events are dropped
  generating_ = false;
  stream_head_pending_ = false;
  handles_.clear();
  builder_.reset();
  if (closed_) return;
  respond_generation_error(status, message, param);
}

void HttpSession::respond_generation_error(unsigned status, const std::string& message,
                                           const std::string& param) {
  if (status == 400 && !param.empty()) {  // its own sampling parameter drove logits non-finite
    respond_error(400, error_body(message, "invalid_request_error", param));
  } else if (status == 400) {
    respond_error(400, error_body(message + refusal_hint_, "invalid_request_error"));
  } else {
    respond_error(status, error_body(message, "server_error"));
  }
}

void HttpSession::respond(unsigned status, std::string body, const std::string& content_type,
                          const Headers& extra_headers) {
  http::response<http::string_body> res{static_cast<http::status>(status), 11};
  res.set(http::field::server, "plinth");
  res.set(http::field::content_type, content_type);
  for (const auto& [k, v] : extra_headers) res.set(k, v);
  res.keep_alive(keep_alive_);
  access_.end(status, status >= 500 ? body : std::string());
  res.body() = std::move(body);
  res.prepare_payload();
  std::ostringstream os;
  os << res;
  response_complete_ = true;
  write(os.str());
}

void HttpSession::respond_error(unsigned status, const std::string& body,
                                const Headers& extra_headers) {
  if (anthropic_errors_) {  // Anthropic's API answers every invalid request with 400
    return respond(status == 422 ? 400 : status, anthropic::error_body(status, body), kJson,
                   extra_headers);
  }
  respond(status, body, kJson, extra_headers);
}

void HttpSession::send_chunk(const std::string& data) {
  if (data.empty()) return;
  std::ostringstream os;
  os << std::hex << data.size() << "\r\n";
  write(os.str() + data + "\r\n");
}

void HttpSession::write(std::string bytes) {
  if (closed_) return;
  out_.push_back(std::move(bytes));
  if (!writing_) do_write();
}

void HttpSession::do_write() {
  writing_ = true;
  // A client that stops reading (a stream it opened and no longer drains) fills the socket
  // buffers and this write waits: past write_timeout the stream closes the socket, the write ends
  // with beast::error::timeout and on_write aborts the generation, freeing its KV.
  stream_.expires_after(state_->options.write_timeout);
  net::async_write(
      stream_, net::buffer(out_.front()),
      [self = shared_from_this()](beast::error_code ec, size_t) { self->on_write(ec); });
}

void HttpSession::on_write(beast::error_code ec) {
  writing_ = false;
  stream_.expires_never();  // a read sets its own expiry; the next write sets its own
  if (ec == beast::error::timeout) {
    state_->engine.context().logger().warn(
        "closing a connection whose client read nothing for {} s (--write-timeout){}",
        state_->options.write_timeout.count(), generating_ ? "; its request is aborted" : "");
  }
  if (ec || closed_) {
    // The client is gone (or we closed): a running generation is aborted.
    out_.clear();
    if (generating_) client_gone();
    return shutdown();
  }
  out_.pop_front();
  if (!out_.empty()) return do_write();
  if (response_complete_ && !generating_) response_done();
}

void HttpSession::response_done() {
  response_complete_ = false;
  if (linger_) return linger(0);
  if (!keep_alive_ || state_->draining) {
    keep_alive_ = false;
    return shutdown();
  }
  if (watching_) {
    resume_read_ = true;  // on_watch starts the next read once the watch read is cancelled
    beast::error_code ignored;
    stream_.socket().cancel(ignored);
    return;
  }
  do_read();
}

// While a generation runs, one read on the socket: EOF or an error means the client left.
// Bytes that arrive (a pipelined next request) are kept in buffer_ for the next parse.
void HttpSession::watch() {
  if (watching_ || closed_) return;
  if (buffer_.size() > size_t{64} * 1024) return;  // a pipelining client; stop watching
  watching_ = true;
  stream_.socket().async_read_some(
      buffer_.prepare(4096),
      [self = shared_from_this()](beast::error_code ec, size_t n) { self->on_watch(ec, n); });
}

void HttpSession::on_watch(beast::error_code ec, size_t n) {
  watching_ = false;
  if (!ec) {
    buffer_.commit(n);
    if (generating_ || writing_ || response_complete_) return watch();
    if (resume_read_) resume_read_ = false;
    return do_read();
  }
  if (ec == net::error::operation_aborted) {
    if (resume_read_ && !closed_) {
      resume_read_ = false;
      do_read();
    }
    return;
  }
  // EOF, reset: the client went away.
  if (generating_) client_gone();
  shutdown();
}

void HttpSession::client_gone() {
  access_.end(499);  // nginx's "client closed request"; not counted
  for (uint64_t h : handles_) state_->engine.abort(h);
  state_->engine.context().logger().debug("client gone; aborted {} engine requests",
                                          handles_.size());
}

void HttpSession::linger(size_t total) {
  if (total == 0) {
    beast::error_code ignored;
    stream_.socket().shutdown(net::ip::tcp::socket::shutdown_send, ignored);
    scratch_.resize(size_t{64} * 1024);
    stream_.expires_after(std::chrono::seconds(5));
  }
  if (total > (64u << 20)) return shutdown();
  stream_.async_read_some(net::buffer(scratch_),
                          [self = shared_from_this(), total](beast::error_code ec, size_t n) {
                            if (ec) return self->shutdown();
                            self->linger(total + n);
                          });
}

void HttpSession::shutdown() {
  if (closed_) return;
  closed_ = true;
  if (!writing_) out_.clear();  // a pending write still reads out_.front()
  beast::error_code ignored;
  stream_.socket().shutdown(net::ip::tcp::socket::shutdown_both, ignored);
  stream_.socket().close(ignored);
}

}  // namespace plinth::server
