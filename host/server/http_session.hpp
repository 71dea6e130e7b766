#pragma once
// One HTTP/1.1 connection (internal to host/server/): reads requests with a size-limited Beast
// parser, routes them, and writes responses — JSON bodies, or server-sent events in chunked
// transfer encoding for streamed generations. All handlers run on the connection's strand; engine
// events are posted onto it. While a generation runs, a read on the socket watches for the client
// going away (EOF / reset) and aborts the generation's engine requests.

#include <cstdint>
#include <deque>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>

#include "server/access_log.hpp"
#include "server/response_builder.hpp"
#include "server/server_state.hpp"

namespace plinth::server {

class HttpSession : public std::enable_shared_from_this<HttpSession> {
 public:
  /// The caller (the accept loop) has added the session to state->sessions; the destructor
  /// removes it.
  HttpSession(boost::asio::ip::tcp::socket socket, std::shared_ptr<Server::State> state);
  ~HttpSession();
  HttpSession(const HttpSession&) = delete;
  HttpSession& operator=(const HttpSession&) = delete;
  void start();
  /// Drain: close now when idle, else after the current response. Any thread.
  void drain();
  /// Stop: close now, aborting a running generation. Any thread.
  void close();
  /// The drain's timeout: aborts the running generation's engine requests, so that its response
  /// still ends whole, as an aborted one (finish_reason "abort", as vLLM ends the requests it
  /// aborts: a stream's final chunk and its end, `data: [DONE]` or the API's last event); the
  /// connection closes after it. Any thread.
  void abort_generation();

 private:
  using Request = boost::beast::http::request<boost::beast::http::string_body>;

  void do_read();
  void on_read(boost::beast::error_code ec);
  void handle(const Request& req);
  void start_generation(const Request& req, ApiKind kind);
  /// Submits a parsed request of any generation API; `response` writes its answer. A request
  /// with an output constraint enters the engine once the grammar pool compiled it.
  void run_generation(const ApiRequest& api, std::unique_ptr<GenerationResponse> response,
                      const std::string& max_tokens_field);
  /// A constrained request while its constraint compiles on the grammar pool.
  struct PendingGeneration {
    ApiRequest api;
    std::unique_ptr<GenerationResponse> response;
    std::string max_tokens_field;
  };
  /// Hands api.grammar to the grammar pool (ApiError 429 when it is full); on_compiled goes on.
  void compile_then_submit(const ApiRequest& api, std::unique_ptr<GenerationResponse> response,
                           const std::string& max_tokens_field);
  /// On the session's strand: the compilation ended (`error` set when it failed: 400 for a
  /// refused constraint, 500 otherwise), so the request is answered or submitted.
  void on_compiled(PendingGeneration& pending, const std::shared_ptr<CompiledGrammar>& grammar,
                   const std::exception_ptr& error);
  /// Submits the engine requests of `api`, each constrained by `grammar` (null: unconstrained).
  void submit_generation(const ApiRequest& api, std::unique_ptr<GenerationResponse> response,
                         const std::string& max_tokens_field,
                         const std::shared_ptr<CompiledGrammar>& grammar);
  /// The routes of the Anthropic Messages API, the Responses API and the chat page
  /// (api_routes.cpp); true when `target` was one of them and is answered.
  bool handle_extra_routes(const Request& req, const std::string& target);
  /// An engine event of generation `generation` (events of an earlier one are dropped).
  void on_event(uint64_t generation, size_t index, const StreamEvent& event);
  void finish_generation();
  /// Ends the running generation with an error response (aborting its other engine requests).
  void fail_generation(unsigned status, const std::string& message, const std::string& param = {});
  /// The error response of a generation the engine refused (400, with refusal_hint_ unless
  /// `param`, the field at fault, is given) or failed.
  void respond_generation_error(unsigned status, const std::string& message,
                                const std::string& param = {});

  /// Extra response headers: (name, value) pairs.
  using Headers = std::vector<std::pair<std::string, std::string>>;
  /// Queues a complete response (status, JSON or text body).
  void respond(unsigned status, std::string body, const std::string& content_type,
               const Headers& extra_headers = {});
  /// Queues a JSON error response (error_body's document).
  void respond_error(unsigned status, const std::string& body, const Headers& extra_headers = {});
  /// Queues one chunk of the chunked SSE body.
  void send_chunk(const std::string& data);
  void write(std::string bytes);
  void do_write();
  void on_write(boost::beast::error_code ec);
  void response_done();

  void watch();
  void on_watch(boost::beast::error_code ec, size_t n);
  void client_gone();
  void shutdown();
  /// After an early error response (413): stop sending, read and drop what the client still
  /// sends (so it reads our response instead of a reset), then close.
  void linger(size_t total);

  boost::beast::tcp_stream stream_;
  boost::beast::flat_buffer buffer_;
  std::optional<boost::beast::http::request_parser<boost::beast::http::string_body>> parser_;
  std::shared_ptr<Server::State> state_;
  AccessLog access_;  // the current request's access line and status counter

  std::deque<std::string> out_;
  bool writing_ = false;
  bool keep_alive_ = true;
  bool response_complete_ = false;  // the last bytes of the current response are queued
  bool closed_ = false;
  bool linger_ = false;  // close by linger() after the response
  std::string scratch_;

  // The running generation.
  bool generating_ = false;
  bool compiling_ = false;  // the request's constraint is on the grammar pool
  bool watching_ = false, resume_read_ = false;
  uint64_t generation_ = 0;           // bumped per generation and when one is failed early
  bool stream_head_pending_ = false;  // a stream whose 200 head is not written yet
  std::string refusal_hint_;          // appended to a 400 from the engine (defaulted max_tokens)
  std::vector<uint64_t> handles_;
  std::vector<bool> choice_done_;
  std::unique_ptr<GenerationResponse> builder_;
  /// The current request is on an Anthropic route: error bodies take Anthropic's shape.
  bool anthropic_errors_ = false;
};

}  // namespace plinth::server
