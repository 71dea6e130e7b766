#include "server/server.hpp"

#include <array>
#include <stdexcept>
#include <string>

#include <boost/asio/post.hpp>
#include <boost/asio/strand.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core.hpp>

#include "app/engine_host.hpp"
#include "runtime/host_context.hpp"
#include "server/http_session.hpp"
#include "server/server_state.hpp"

namespace plinth::server {

namespace net = boost::asio;
namespace beast = boost::beast;
using tcp = net::ip::tcp;

namespace {

/// The endpoint to listen on: `host` as an IP address, else a name resolved on this machine
/// (`localhost`). Throws std::runtime_error naming the host when it is neither.
tcp::endpoint listen_endpoint(net::io_context& io, const std::string& host, uint16_t port) {
  boost::system::error_code ec;
  const net::ip::address address = net::ip::make_address(host, ec);
  if (!ec) return {address, port};
  tcp::resolver resolver(io);
  const auto results = resolver.resolve(
      host, std::to_string(port), tcp::resolver::passive | tcp::resolver::numeric_service, ec);
  if (ec || results.empty()) {
    throw std::runtime_error("host \"" + host +
                             "\" is neither an IP address nor a name this machine resolves (" +
                             (ec ? ec.message() : std::string("no address")) +
                             "); give e.g. 127.0.0.1, 0.0.0.0 or localhost");
  }
  return results.begin()->endpoint();
}

/// "cannot listen on host:port: why" (with the fix for a busy port).
[[noreturn]] void throw_listen_error(const std::string& host, uint16_t port,
                                     const boost::system::system_error& e) {
  throw std::runtime_error(
      "cannot listen on " + host + ":" + std::to_string(port) + ": " + e.code().message() +
      (e.code() == boost::asio::error::address_in_use
           ? " (another server holds the port: pick another port, or port 0 for a free one)"
           : ""));
}

/// How long the drain waits, after --drain-timeout aborted the running requests, for their
/// responses to end (the engine answers an abort at its next step) before closing what is open.
constexpr auto kDrainAbortGrace = std::chrono::seconds(5);

/// Seconds a refused connection waits for the client to finish sending before it is closed.
constexpr auto kRefuseLinger = std::chrono::seconds(1);
/// Pause of the accept loop after accept() failed for want of descriptors or memory.
constexpr auto kAcceptBackoff = std::chrono::milliseconds(100);

/// Over ServerOptions::max_connections: answers 503 and closes. The send side is shut first and
/// what the client sends is read for a moment, so that it reads the answer instead of a reset.
void refuse(tcp::socket socket, size_t max_connections) {
  auto stream = std::make_shared<beast::tcp_stream>(std::move(socket));
  const std::string body =
      R"({"error":{"message":"the server is at its limit of )" + std::to_string(max_connections) +
      R"( open connections (--max-connections); retry later","type":"server_error","param":null,)"
      R"("code":null}})";
  auto bytes = std::make_shared<std::string>(
      "HTTP/1.1 503 Service Unavailable\r\nServer: plinth\r\nContent-Type: application/json\r\n"
      "Retry-After: 1\r\nConnection: close\r\nContent-Length: " +
      std::to_string(body.size()) + "\r\n\r\n" + body);
  stream->expires_after(kRefuseLinger);
  net::async_write(*stream, net::buffer(*bytes), [stream, bytes](beast::error_code ec, size_t) {
    if (ec) return;
    beast::error_code ignored;
    stream->socket().shutdown(tcp::socket::shutdown_send, ignored);
    auto scratch = std::make_shared<std::array<char, 4096>>();
    // One read until EOF, an error or the expiry; then the stream (and socket) goes away.
    stream->async_read_some(net::buffer(*scratch), [stream, scratch](beast::error_code, size_t) {});
  });
}

/// accept() failures that mean "no resources now" (EMFILE, ENFILE, ENOBUFS, ENOMEM): retrying at
/// once would fail again at once, since the pending connection stays in the listen backlog.
bool out_of_resources(const boost::system::error_code& ec) {
  namespace errc = boost::system::errc;
  return ec == errc::too_many_files_open || ec == errc::too_many_files_open_in_system ||
         ec == errc::no_buffer_space || ec == errc::not_enough_memory;
}

void do_accept(const std::shared_ptr<Server::State>& state) {
  state->acceptor.async_accept(
      net::make_strand(state->io), [state](boost::system::error_code ec, tcp::socket socket) {
        if (ec == net::error::operation_aborted || !state->acceptor.is_open()) return;
        spdlog::logger& log = state->engine.context().logger();
        if (out_of_resources(ec)) {
          if (!state->accept_backing_off) {
            state->accept_backing_off = true;
            log.warn(
                "accept failed: {} ({} connections open); retrying every {} ms until it "
                "succeeds; raise the file descriptor limit (ulimit -n) or lower "
                "--max-connections",
                ec.message(), state->num_sessions(), kAcceptBackoff.count());
          }
          state->accept_timer.expires_after(kAcceptBackoff);
          state->accept_timer.async_wait([state](boost::system::error_code wait_ec) {
            if (!wait_ec && state->acceptor.is_open()) do_accept(state);
          });
          return;
        }
        if (!ec) {
          if (state->accept_backing_off) {
            state->accept_backing_off = false;
            log.info("accepting connections again");
          }
          boost::system::error_code ignored;
          socket.set_option(tcp::no_delay(true), ignored);
          std::shared_ptr<HttpSession> session;
          {
            std::lock_guard lock(state->mutex);
            if (state->sessions.size() < state->options.max_connections) {
              session = std::make_shared<HttpSession>(std::move(socket), state);
              state->sessions.insert(session.get());
            }
          }
          if (session) {
            session->start();
          } else {
            // Moved above only when a session was made, so here it is still ours.
            // NOLINTNEXTLINE(bugprone-use-after-move)
            refuse(std::move(socket), state->options.max_connections);
          }
        }
        do_accept(state);
      });
}

}  // namespace

std::vector<std::shared_ptr<HttpSession>> Server::State::live_sessions() {
  std::lock_guard lock(mutex);
  std::vector<std::shared_ptr<HttpSession>> live;
  live.reserve(sessions.size());
  for (HttpSession* s : sessions) {
    // Empty for a session whose destructor runs now (it waits on the mutex to remove itself).
    if (auto p = s->weak_from_this().lock()) live.push_back(std::move(p));
  }
  return live;
}

size_t Server::State::num_sessions() {
  std::lock_guard lock(mutex);
  return sessions.size();
}

void Server::State::remove_session(HttpSession* session) {
  std::lock_guard lock(mutex);
  sessions.erase(session);
}

Server::Server(net::io_context& io, AsyncEngine& engine, ServerOptions options)
    : state_(std::make_shared<State>(io, engine, std::move(options))) {
  if (state_->options.served_model_name.empty()) {
    state_->options.served_model_name = engine.host().default_served_name();
  }
  state_->limits.max_n = state_->options.max_n;
  state_->grammar_pool = std::make_unique<GrammarCompilePool>(
      engine.host().grammar(), state_->options.grammar_compile_threads,
      state_->options.max_grammar_compiles);
  state_->limits.served_model_name = state_->options.served_model_name;
  // Every /metrics series carries the served name, as vLLM's model_name label.
  engine.context().metrics().set_constant_labels(
      {{"model_name", state_->options.served_model_name}});
}

Server::~Server() {
  stop();
  // A compilation in flight posts its result onto the io_context: wait for it while that exists.
  state_->grammar_pool->shutdown();
}

tcp::acceptor bind_port(net::io_context& io, const std::string& host, uint16_t port) {
  const tcp::endpoint ep = listen_endpoint(io, host, port);
  tcp::acceptor a(io);
  try {
    a.open(ep.protocol());
    a.set_option(net::socket_base::reuse_address(true));
    a.bind(ep);
  } catch (const boost::system::system_error& e) {
    throw_listen_error(host, port, e);
  }
  return a;
}

void Server::start() {
  start(bind_port(state_->io, state_->options.host, state_->options.port));
}

void Server::start(tcp::acceptor bound) {
  tcp::acceptor& a = state_->acceptor;
  a = std::move(bound);
  try {
    a.listen(net::socket_base::max_listen_connections);
  } catch (const boost::system::system_error& e) {
    boost::system::error_code ignored;
    a.close(ignored);
    throw_listen_error(state_->options.host, state_->options.port, e);
  }
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
    state->accept_timer.cancel();
  });
  for (auto& s : state->live_sessions()) s->drain();
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  auto aborted = std::make_shared<bool>(false);
  // Poll every 20 ms until no request is pending and every connection is closed. At `timeout`
  // the running requests are aborted, so that their responses end whole (a stream with its final
  // chunk and [DONE]); what is still open kDrainAbortGrace later is closed.
  auto poll = std::make_shared<std::function<void()>>();
  *poll = [state, done = std::move(done), deadline, aborted, poll]() {
    const auto now = std::chrono::steady_clock::now();
    auto live = state->live_sessions();
    if (now >= deadline && !*aborted) {
      *aborted = true;
      state->engine.context().logger().warn(
          "--drain-timeout reached: aborting {} running requests (their responses end with "
          "finish_reason \"abort\")",
          state->engine.num_pending());
      for (auto& s : live) s->abort_generation();
    }
    const bool expired = now >= deadline + kDrainAbortGrace;
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
    state->accept_timer.cancel();
  });
  for (auto& s : state->live_sessions()) s->close();
}

}  // namespace plinth::server
