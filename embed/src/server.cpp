#include "plinth/embed/server.hpp"

#include <stdexcept>
#include <utility>

#include "engine_impl.hpp"
#include "server/server.hpp"

namespace plinth::embed {

struct Server::Impl {
  server::Server server;
  std::string host;
};

namespace {

server::ServerOptions to_host(const ServerOptions& o) {
  server::ServerOptions s;
  s.host = o.host;
  s.port = o.port;
  s.api_key = o.api_key;
  s.served_model_name = o.served_model_name;
  s.body_limit = o.body_limit;
  s.header_limit = o.header_limit;
  s.max_n = o.max_n;
  s.idle_timeout = o.idle_timeout;
  s.max_connections = o.max_connections;
  s.web_ui = o.web_ui;
  return s;
}

}  // namespace

Server::Server(boost::asio::io_context& io, Engine& engine, const ServerOptions& options)
    : impl_(new Impl{server::Server(io, *engine.impl().async, to_host(options)), options.host}) {}

Server::~Server() = default;

void Server::start() {
  try {
    impl_->server.start();
  } catch (const std::exception& e) {
    throw std::runtime_error("plinth server: cannot listen on " + impl_->host + ": " + e.what());
  }
}

uint16_t Server::port() const {
  return impl_->server.port();
}

const std::string& Server::served_model_name() const {
  return impl_->server.served_model_name();
}

void Server::drain(std::function<void()> done, std::chrono::seconds timeout) {
  impl_->server.drain(std::move(done), timeout);
}

void Server::stop() {
  impl_->server.stop();
}

}  // namespace plinth::embed
