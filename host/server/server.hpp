#pragma once
// plinth::server::Server — the OpenAI-compatible HTTP/1.1 server (Boost.Beast, keep-alive) over an
// AsyncEngine, on an io_context the caller supplies and runs (one or more threads; each connection
// is on its own strand). Endpoints (docs/server.md):
//   POST /v1/completions, POST /v1/chat/completions   JSON, or SSE with "stream": true
//   GET  /v1/models, GET /v1/models/{id}, GET /health, GET /metrics  (Prometheus text 0.0.4)
//   POST /tokenize, POST /detokenize (vLLM's and llama.cpp's shapes), GET /version
//   POST /v1/messages, POST /v1/messages/count_tokens (Anthropic), POST /v1/responses (OpenAI
//   Responses, stateless), GET / (the chat page, unless ServerOptions::web_ui is false)
// Errors are OpenAI-style JSON bodies with 400 / 401 / 404 / 405 / 413 / 422 / 429 / 431 / 503.
// Connections: at most ServerOptions::max_connections open (past it 503 and close), closed after
// idle_timeout without a request, or when a write waits write_timeout for a client that does not
// read; when accept() runs out of file descriptors the listener retries every 100 ms instead of
// spinning.
// A client that disconnects while its request runs aborts it (its KV blocks go back to the pool
// before the next engine step).
//
// Embedding (examples/embedded_server/):
//   auto engine = plinth::server::AsyncEngine::load("manifests/cpu.json");
//   boost::asio::io_context io;
//   plinth::server::Server server(io, *engine, {.port = 8000});
//   server.start();
//   io.run();            // until server.stop() or drain(...) completes and nothing else is queued

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>

#include "server/async_engine.hpp"

namespace plinth::server {

struct ServerOptions {
  std::string host = "127.0.0.1";  ///< address to bind; 0.0.0.0 to listen on every interface
  uint16_t port = 8000;            ///< 0 = a free port (see Server::port())
  /// "" = no authentication; else "Authorization: Bearer KEY" or "x-api-key: KEY" on /v1/*
  std::string api_key;
  /// The `model` clients name (also accepted: the model's general.name); "" = the GGUF file's stem.
  std::string served_model_name;
  size_t body_limit = 1 << 20;     ///< request bodies over this many bytes get 413
  size_t header_limit = 64 << 10;  ///< request lines + headers over this many bytes get 431
  int32_t max_n = 16;              ///< n in [1, max_n]
  /// A connection waiting for a request this long is closed: an idle keep-alive connection, and
  /// one whose request (line, headers and body) has not fully arrived this long after the server
  /// started reading it. Not applied while a request runs or its response is written.
  std::chrono::seconds idle_timeout{60};
  /// One write of a response (a JSON body, or one chunk of a stream) that the client does not
  /// take within this long closes the connection and aborts its running request (its KV blocks
  /// go back to the pool; counted in plinth_request_aborted_total): a client that opens a stream
  /// and stops reading cannot hold its sequence forever.
  std::chrono::seconds write_timeout{60};
  /// Open connections at most. Past it a new connection is accepted, answered 503 with
  /// `Retry-After: 1` and `Connection: close`, and closed, so that a client learns why instead of
  /// hanging in the listen backlog.
  size_t max_connections = 1024;
  /// Worker threads compiling output constraints (response_format, structured_outputs), so that
  /// a slow compilation holds neither a network thread nor the engine.
  unsigned grammar_compile_threads = 2;
  /// Constraints compiling or waiting to at most; past it a constrained request gets 429 with
  /// `Retry-After: 1`.
  size_t max_grammar_compiles = 64;
  /// Serve the chat page (GET /, /chat.js, /chat.css; compiled in from host/server/web/).
  bool web_ui = true;
};

/// Binds host:port (host an IP address or a name this machine resolves, e.g. localhost) without
/// listening yet, for Server::start(acceptor): `plinth serve` takes its port before it loads the
/// model, so that a port in use stops it at once rather than after the load (connections are
/// refused until start() listens, as before). Throws std::runtime_error naming host:port (a busy
/// port says so) or the host.
boost::asio::ip::tcp::acceptor bind_port(boost::asio::io_context& io, const std::string& host,
                                         uint16_t port);

class Server {
 public:
  /// `io` and `engine` must outlive the server. Nothing happens before start().
  Server(boost::asio::io_context& io, AsyncEngine& engine, ServerOptions options);
  /// Closes the acceptor and every connection (stop()).
  ~Server();
  Server(const Server&) = delete;
  Server& operator=(const Server&) = delete;

  /// Binds host:port (host an IP address or a name this machine resolves, e.g. localhost) and
  /// starts accepting. Throws std::runtime_error naming host:port when it cannot listen there.
  void start();
  /// Starts accepting on `bound`, a socket bind_port() bound (on this server's io_context);
  /// std::runtime_error naming host:port when it cannot listen.
  void start(boost::asio::ip::tcp::acceptor bound);
  /// The bound port (after start()).
  uint16_t port() const;
  /// The model id clients name: ServerOptions::served_model_name, or the GGUF file's stem when it
  /// was "". Start-up banners print this.
  const std::string& served_model_name() const;
  /// Graceful drain: stop accepting, answer new requests on open connections with 503, let running
  /// requests finish and their responses go out, close idle connections; then post `done` onto the
  /// io_context. `timeout` later, whatever still runs is aborted and its response ends as an
  /// aborted one (finish_reason "abort"; a stream with its final chunk and end, as vLLM ends the
  /// requests it aborts); connections still open 5 s after that are closed.
  void drain(std::function<void()> done, std::chrono::seconds timeout = std::chrono::seconds(60));
  /// Immediate stop: closes the acceptor and every connection; their requests are aborted.
  void stop();

  struct State;  // shared with the connections

 private:
  std::shared_ptr<State> state_;
};

}  // namespace plinth::server
