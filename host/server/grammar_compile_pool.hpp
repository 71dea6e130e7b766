#pragma once
// Output constraints (response_format, structured_outputs) compiled on worker threads (internal to
// host/server/): the grammar plugin's compile can take seconds on a large schema, and neither the
// network threads (which serve every other connection) nor the engine thread may wait for it.
// A session hands its GrammarSpec to the pool and continues in the completion callback, which it
// posts back onto its own strand; the request enters the engine only once its constraint compiled,
// so a refused one (unsupported keyword, over-large, over the plugin's time cap) never does.

#include <atomic>
#include <cstddef>
#include <exception>
#include <functional>
#include <memory>

#include <boost/asio/thread_pool.hpp>

#include "engine/grammar.hpp"

namespace plinth::server {

class GrammarCompilePool {
 public:
  /// Called on a worker thread with the compiled grammar, or with the exception compile threw
  /// (GrammarSpecError: the request's fault; another: the plugin failed).
  using Done = std::function<void(std::shared_ptr<CompiledGrammar>, std::exception_ptr)>;

  /// `compiler` must outlive the pool. `threads` workers (at least 1); at most `max_queued`
  /// compilations waiting or running at once.
  GrammarCompilePool(const GrammarCompiler& compiler, unsigned threads, size_t max_queued);
  /// Waits for the compilations in flight (each bounded by the plugin's compile_timeout_ms).
  ~GrammarCompilePool();
  GrammarCompilePool(const GrammarCompilePool&) = delete;
  GrammarCompilePool& operator=(const GrammarCompilePool&) = delete;

  /// Queues the compilation of `spec`; `done` runs on a worker thread when it ends. False (and
  /// `done` is never called) when max_queued compilations are already in flight or after
  /// shutdown(): the caller answers 429. Any thread.
  bool submit(GrammarSpec spec, Done done);
  /// Compilations waiting or running now. Any thread.
  size_t in_flight() const { return in_flight_.load(); }
  /// Refuses further submissions and waits for those in flight. Any thread but a worker.
  void shutdown();

 private:
  const GrammarCompiler& compiler_;
  size_t max_queued_;
  std::atomic<size_t> in_flight_{0};
  std::atomic<bool> stopped_{false};
  boost::asio::thread_pool pool_;
};

}  // namespace plinth::server
