#pragma once
// What the listener and every connection share (internal to host/server/).

#include <atomic>
#include <memory>
#include <mutex>
#include <vector>

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/steady_timer.hpp>

#include "server/request_parser.hpp"
#include "server/server.hpp"

namespace plinth::server {

class HttpSession;

struct Server::State {
  State(boost::asio::io_context& io, AsyncEngine& engine, ServerOptions options)
      : io(io), engine(engine), options(std::move(options)), acceptor(io), timer(io) {}

  boost::asio::io_context& io;
  AsyncEngine& engine;
  ServerOptions options;
  ParseLimits limits;
  boost::asio::ip::tcp::acceptor acceptor;
  boost::asio::steady_timer timer;  // drain polling
  std::atomic<bool> draining{false};
  std::atomic<uint64_t> next_id{1};

  std::mutex mutex;  // guards sessions
  std::vector<std::weak_ptr<HttpSession>> sessions;
  /// Live sessions (expired entries dropped).
  std::vector<std::shared_ptr<HttpSession>> live_sessions();
};

}  // namespace plinth::server
