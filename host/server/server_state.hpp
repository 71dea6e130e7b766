#pragma once
// What the listener and every connection share (internal to host/server/).

#include <atomic>
#include <memory>
#include <mutex>
#include <unordered_set>
#include <vector>

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/steady_timer.hpp>

#include "server/grammar_compile_pool.hpp"
#include "server/request_parser.hpp"
#include "server/server.hpp"

namespace plinth::server {

class HttpSession;

struct Server::State {
  State(boost::asio::io_context& io, AsyncEngine& engine, ServerOptions options)
      : io(io),
        engine(engine),
        options(std::move(options)),
        acceptor(io),
        timer(io),
        accept_timer(io) {}

  boost::asio::io_context& io;
  AsyncEngine& engine;
  ServerOptions options;
  ParseLimits limits;
  boost::asio::ip::tcp::acceptor acceptor;
  boost::asio::steady_timer timer;         // drain polling
  boost::asio::steady_timer accept_timer;  // the back-off after accept() ran out of descriptors
  bool accept_backing_off = false;         // accept handlers only (one accept in flight at a time)
  std::atomic<bool> draining{false};
  std::atomic<uint64_t> next_id{1};
  /// Compiles the requests' output constraints off the network threads (Server's constructor
  /// makes it; Server's destructor waits for it before the io_context can go).
  std::unique_ptr<GrammarCompilePool> grammar_pool;

  std::mutex mutex;  // guards sessions
  /// Open connections: a session is added when accepted and removes itself in its destructor, so
  /// nothing of a closed connection stays behind.
  std::unordered_set<HttpSession*> sessions;
  /// Owning references to the open sessions (those already being destroyed are left out).
  std::vector<std::shared_ptr<HttpSession>> live_sessions();
  /// Open connections now. Any thread.
  size_t num_sessions();
  /// Unregisters a session (its destructor). Any thread.
  void remove_session(HttpSession* session);
};

}  // namespace plinth::server
