// Embedding plinth: an OpenAI-compatible server inside your own program, on your own io_context.
//   embedded_server MANIFEST [PORT]     (PORT 0 = any free port; Ctrl-C drains and exits)
#include <csignal>
#include <cstdio>
#include <exception>
#include <string>

#include <boost/asio/io_context.hpp>
#include <boost/asio/signal_set.hpp>

#include <plinth/embed/engine.hpp>
#include <plinth/embed/server.hpp>

namespace {

int serve(int argc, char** argv) {
  if (argc < 2) return std::fprintf(stderr, "usage: %s MANIFEST [PORT]\n", argv[0]), 2;
  auto engine = plinth::embed::Engine::load(argv[1]);  // model, plugins, engine thread
  boost::asio::io_context io;                          // the program's own event loop
  plinth::embed::ServerOptions options;
  options.port = argc > 2 ? static_cast<uint16_t>(std::stoi(argv[2])) : 8000;
  plinth::embed::Server server(io, *engine, options);
  server.start();
  std::printf("plinth: serving %s on http://127.0.0.1:%u\n", server.served_model_name().c_str(),
              static_cast<unsigned>(server.port()));
  std::fflush(stdout);
  boost::asio::signal_set signals(io, SIGINT, SIGTERM);
  signals.async_wait([&](auto, int) { server.drain([&io] { io.stop(); }); });
  io.run();  // the program's other work could share this io_context
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    return serve(argc, argv);
  } catch (const std::exception& e) {  // a bad manifest, a port in use, ...: say so, exit 1
    std::fprintf(stderr, "embedded_server: %s\n", e.what());
  } catch (...) {
    std::fprintf(stderr, "embedded_server: unknown exception\n");
  }
  return 1;
}
