#pragma once
// plinth::embed::Server — the OpenAI-compatible HTTP server (docs/server.md: /v1/completions,
// /v1/chat/completions, /v1/models, /health, /metrics, /tokenize ...; docs/clients.md: the
// Anthropic /v1/messages, the Responses API /v1/responses, the chat page at /) over an Engine, on a
// boost::asio::io_context the program owns and runs (CMake: plinth::server, which brings Boost's
// headers; the program must use the Boost version plinth was built with, which find_package(plinth)
// asks for). examples/embedded_server/main.cpp:
//   auto engine = plinth::embed::Engine::load("cpu.json");
//   boost::asio::io_context io;
//   plinth::embed::Server server(io, *engine, {.port = 8000});
//   server.start();
//   io.run();   // until stop() or drain(...) completes and nothing else is queued

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "plinth/embed/engine.hpp"
#include "plinth/embed/export.hpp"

namespace boost::asio {
class io_context;
}  // namespace boost::asio

namespace plinth::embed {

/// The server's settings, as `plinth serve`'s options of the same names (docs/server.md).
struct ServerOptions {
  std::string host = "127.0.0.1";         ///< address to bind; 0.0.0.0 to listen on every interface
  uint16_t port = 8000;                   ///< 0 = a free port (see Server::port())
  std::string api_key;                    ///< "" = none; else Bearer KEY or x-api-key on /v1/*
  std::string served_model_name;          ///< the `model` clients name; "" = the GGUF file's stem
  size_t body_limit = 1 << 20;            ///< request bodies over this many bytes get 413
  size_t header_limit = 64 << 10;         ///< request lines + headers over this many bytes get 431
  int32_t max_n = 16;                     ///< n in [1, max_n]
  std::chrono::seconds idle_timeout{60};  ///< an idle or slow connection is closed after this
  size_t max_connections = 1024;          ///< open connections at most (past it: 503, close)
  bool web_ui = true;                     ///< serve the chat page at GET /
};

class PLINTH_EMBED_API Server {
 public:
  /// `io` and `engine` must outlive the server. Nothing happens before start().
  Server(boost::asio::io_context& io, Engine& engine, const ServerOptions& options = {});
  /// Closes the acceptor and every connection.
  ~Server();
  Server(const Server&) = delete;
  Server& operator=(const Server&) = delete;

  /// Binds host:port and starts accepting. Throws std::runtime_error naming the address when it
  /// cannot bind.
  void start();
  /// The bound port (after start()).
  uint16_t port() const;
  /// The model id clients name (ServerOptions::served_model_name, or the GGUF file's stem).
  const std::string& served_model_name() const;
  /// Graceful drain: stop accepting, answer new requests with 503, let running ones finish, then
  /// post `done` onto the io_context; `timeout` later whatever still runs is aborted. Call it on
  /// the io_context's thread (e.g. from a boost::asio::signal_set handler).
  void drain(std::function<void()> done, std::chrono::seconds timeout = std::chrono::seconds(60));
  /// Immediate stop: closes the acceptor and every connection; their requests are aborted.
  void stop();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace plinth::embed
