// plinth serve: the OpenAI-compatible HTTP server over the pipeline of a manifest.
//   plinth serve --manifest manifests/cpu.json [--host 127.0.0.1] [--port 8000] [--api-key K]
//                [--max-connections 1024] [--idle-timeout 60] [--write-timeout 60]
//                (docs/server.md has every option)
// The engine runs on its own thread (AsyncEngine); the network on --http-threads Asio threads.
// SIGINT / SIGTERM drain: no new requests, running ones finish, then exit 0; a second one stops
// at once (running requests aborted), also exit 0.
#include <chrono>
#include <csignal>
#include <cstdio>
#include <thread>
#include <utility>
#include <vector>

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/signal_set.hpp>

#include "app/engine_host.hpp"
#include "cli/chat_template_option.hpp"
#include "cli/commands.hpp"
#include "model/gguf_error.hpp"
#include "server/server.hpp"

namespace plinth::cli {

namespace {

struct ServeOptions {
  std::string manifest, model, chat_template;
  server::ServerOptions server;
  size_t max_pending = 256;
  int http_threads = 1;
  int drain_timeout_s = 30;
  int idle_timeout_s = 60;
  int write_timeout_s = 60;
  uint32_t max_model_len = 0;
};

void run(const ServeOptions& o) {
  boost::asio::io_context io;
  // The port first: one in use stops the start at once, not after a long model load.
  boost::asio::ip::tcp::acceptor port = server::bind_port(io, o.server.host, o.server.port);
  HostContext context(make_logger());
  EngineHost::Options ho;
  ho.manifest = o.manifest;
  if (!o.model.empty()) ho.model = o.model;
  ho.max_model_len = o.max_model_len;
  ho.chat_template = o.chat_template;
  std::unique_ptr<EngineHost> host = EngineHost::load(ho, context);
  server::AsyncEngine engine(*host, context, {.max_pending = o.max_pending});

  server::ServerOptions so = o.server;
  so.idle_timeout = std::chrono::seconds(o.idle_timeout_s);
  so.write_timeout = std::chrono::seconds(o.write_timeout_s);
  server::Server srv(io, engine, so);
  srv.start(std::move(port));
  // Handled before the banner: a script that signals as soon as it reads the banner gets a drain.
  // A second signal during the drain stops at once (running requests aborted), as a user pressing
  // Ctrl-C twice expects; the drain says so at warn, the default level, so it is seen.
  boost::asio::signal_set signals(io, SIGINT, SIGTERM);
  signals.async_wait([&](boost::system::error_code ec, int) {
    if (ec) return;
    context.logger().warn(
        "draining: no new requests; running ones finish (at most --drain-timeout {} s); "
        "Ctrl-C again to stop now",
        o.drain_timeout_s);
    srv.drain([&io] { io.stop(); }, std::chrono::seconds(o.drain_timeout_s));
    signals.async_wait([&](boost::system::error_code ec2, int) {
      if (ec2) return;
      context.logger().warn("stopping now: running requests aborted");
      srv.stop();
      boost::asio::post(io, [&io] { io.stop(); });  // after the closes stop() posted
    });
  });
  // Tests and scripts read this line to learn the port (with --port 0).
  std::printf("plinth: serving %s on http://%s:%u\n", srv.served_model_name().c_str(),
              o.server.host.c_str(), static_cast<unsigned>(srv.port()));
  if (so.web_ui) {
    std::printf("plinth: chat page at http://%s:%u/\n", o.server.host.c_str(),
                static_cast<unsigned>(srv.port()));
  }
  std::fflush(stdout);
  std::vector<std::thread> threads;
  for (int i = 1; i < o.http_threads; ++i) threads.emplace_back([&io] { io.run(); });
  io.run();
  for (auto& t : threads) t.join();
}

}  // namespace

void register_serve(CLI::App& app) {
  auto o = std::make_shared<ServeOptions>();
  CLI::App* cmd =
      app.add_subcommand("serve", "serve a manifest over an OpenAI-compatible HTTP API");
  cmd->add_option("--manifest", o->manifest, "manifest file")->required()->check(CLI::ExistingFile);
  cmd->add_option("--model", o->model, "GGUF file (overrides the manifest's model)");
  add_chat_template_option(cmd, o->chat_template);
  cmd->add_option("--host", o->server.host, "address to bind")->capture_default_str();
  cmd->add_option("--port", o->server.port, "TCP port (0 = any free port)")->capture_default_str();
  cmd->add_option("--api-key", o->server.api_key,
                  "require \"Authorization: Bearer KEY\" on /v1/* (default: none; also "
                  "PLINTH_API_KEY)")
      ->envname("PLINTH_API_KEY");
  cmd->add_option("--served-model-name", o->server.served_model_name,
                  "the model name clients use (default: the GGUF file's stem)");
  cmd->add_option(
         "--max-model-len", o->max_model_len,
         "prompt + generated tokens per sequence at most (0 = the model's context length); the "
         "KV pool must hold one such sequence")
      ->capture_default_str();
  cmd->add_option("--max-pending", o->max_pending,
                  "requests waiting + running at most; past it 429 with Retry-After")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  cmd->add_option("--body-limit", o->server.body_limit, "request body limit, bytes (413 past it)")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  cmd->add_option("--max-connections", o->server.max_connections,
                  "open connections at most; past it a new one gets 503 with Retry-After and is "
                  "closed")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  cmd->add_option("--idle-timeout", o->idle_timeout_s,
                  "seconds a connection may wait for (or take to send) its next request before it "
                  "is closed")
      ->check(CLI::Range(1, 86400))
      ->capture_default_str();
  cmd->add_option("--write-timeout", o->write_timeout_s,
                  "seconds one write of a response (a stream's chunk) may wait for a client that "
                  "does not read before the connection is closed and its request aborted")
      ->check(CLI::Range(1, 86400))
      ->capture_default_str();
  cmd->add_flag("!--no-web-ui", o->server.web_ui, "do not serve the chat page at GET /");
  cmd->add_option("--http-threads", o->http_threads, "network threads")
      ->check(CLI::Range(1, 64))
      ->capture_default_str();
  cmd->add_option("--grammar-compile-threads", o->server.grammar_compile_threads,
                  "threads compiling output constraints (response_format, structured_outputs) "
                  "off the network threads")
      ->check(CLI::Range(1, 64))
      ->capture_default_str();
  cmd->add_option("--drain-timeout", o->drain_timeout_s,
                  "seconds a SIGINT/SIGTERM drain waits for running requests")
      ->capture_default_str();
  cmd->callback([o] {
    try {
      run(*o);
    } catch (const GgufError& e) {  // the model file: an input error, exit 2 as in `generate`
      std::fprintf(stderr, "error: %s\n", e.what());
      throw CLI::RuntimeError(kExitConfig);
    }
  });
}

}  // namespace plinth::cli
