#include "server/server.hpp"

#include <boost/asio/post.hpp>
#include <boost/asio/strand.hpp>

#include "app/engine_host.hpp"
#include "runtime/host_context.hpp"
#include "server/http_session.hpp"
#include "server/server_state.hpp"

namespace plinth::server {

namespace net = boost::asio;
using tcp = net::ip::tcp;

namespace {

void do_accept(const std::shared_ptr<Server::State>& state) {
  state->acceptor.async_accept(
      net::make_strand(state->io), [state](boost::system::error_code ec, tcp::socket socket) {
        if (ec == net::error::operation_aborted || !state->acceptor.is_open()) return;
        if (!ec) {
          boost::system::error_code ignored;
          socket.set_option(tcp::no_delay(true), ignored);
          auto session = std::make_shared<HttpSession>(std::move(socket), state);
          {
            std::lock_guard lock(state->mutex);
            state->sessions.push_back(session);
          }
          session->start();
        }
        do_accept(state);
      });
}

}  // namespace

std::vector<std::shared_ptr<HttpSession>> Server::State::live_sessions() {
  std::lock_guard lock(mutex);
  std::vector<std::shared_ptr<HttpSession>> live;
  std::vector<std::weak_ptr<HttpSession>> kept;
  for (auto& w : sessions) {
    if (auto s = w.lock()) {
      live.push_back(s);
      kept.push_back(w);
    }
  }
  sessions = std::move(kept);
  return live;
}

Server::Server(net::io_context& io, AsyncEngine& engine, ServerOptions options)
    : state_(std::make_shared<State>(io, engine, std::move(options))) {
  if (state_->options.served_model_name.empty()) {
    // The GGUF file's stem, as vLLM serves the model path: no spaces, unlike many general.name.
    state_->options.served_model_name = engine.host().model_path().stem().string();
  }
  state_->limits.max_n = state_->options.max_n;
  state_->limits.served_model_name = state_->options.served_model_name;
}

Server::~Server() {
  stop();
}

void Server::start() {
  tcp::endpoint ep(net::ip::make_address(state_->options.host), state_->options.port);
  tcp::acceptor& a = state_->acceptor;
  a.open(ep.protocol());
  a.set_option(net::socket_base::reuse_address(true));
  a.bind(ep);
  a.listen(net::socket_base::max_listen_connections);
  state_->engine.context().logger().info("serving {} on http://{}:{}",
                                         state_->options.served_model_name, state_->options.host,
                                         port());
  do_accept(state_);
}

uint16_t Server::port() const {
  boost::system::error_code ec;
  auto ep = state_->acceptor.local_endpoint(ec);
  return ec ? 0 : ep.port();
}

const std::string& Server::served_model_name() const {
  return state_->options.served_model_name;
}

void Server::drain(std::function<void()> done, std::chrono::seconds timeout) {
  auto state = state_;
  state->draining = true;
  state->engine.begin_drain();
  net::post(state->io, [state] {
    boost::system::error_code ignored;
    state->acceptor.close(ignored);
  });
  for (auto& s : state->live_sessions()) s->drain();
  auto deadline = std::chrono::steady_clock::now() + timeout;
  // Poll every 20 ms until no request is pending and every connection is closed.
  auto poll = std::make_shared<std::function<void()>>();
  *poll = [state, done = std::move(done), deadline, poll]() {
    bool expired = std::chrono::steady_clock::now() >= deadline;
    auto live = state->live_sessions();
    if (expired) {
      for (auto& s : live) s->close();
    }
    if ((live.empty() && state->engine.num_pending() == 0) || expired) {
      net::post(state->io, done);
      *poll = nullptr;  // break the self-reference
      return;
    }
    state->timer.expires_after(std::chrono::milliseconds(20));
    state->timer.async_wait([poll](boost::system::error_code) {
      if (*poll) (*poll)();
    });
  };
  net::post(state->io, [poll] { (*poll)(); });
}

void Server::stop() {
  auto state = state_;
  state->draining = true;
  net::post(state->io, [state] {
    boost::system::error_code ignored;
    state->acceptor.close(ignored);
    state->timer.cancel();
  });
  for (auto& s : state->live_sessions()) s->close();
}

}  // namespace plinth::server
