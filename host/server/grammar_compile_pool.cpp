#include "server/grammar_compile_pool.hpp"

#include <algorithm>
#include <utility>

#include <boost/asio/post.hpp>

namespace plinth::server {

GrammarCompilePool::GrammarCompilePool(const GrammarCompiler& compiler, unsigned threads,
                                       size_t max_queued)
    : compiler_(compiler),
      max_queued_(std::max<size_t>(1, max_queued)),
      pool_(std::max(1u, threads)) {}

GrammarCompilePool::~GrammarCompilePool() {
  shutdown();
}

bool GrammarCompilePool::submit(GrammarSpec spec, Done done) {
  if (stopped_.load()) return false;
  size_t n = in_flight_.load();
  do {
    if (n >= max_queued_) return false;
  } while (!in_flight_.compare_exchange_weak(n, n + 1));
  boost::asio::post(pool_, [this, spec = std::move(spec), done = std::move(done)]() mutable {
    std::shared_ptr<CompiledGrammar> grammar;
    std::exception_ptr error;
    try {
      grammar = compiler_.compile(spec);
    } catch (...) {
      error = std::current_exception();
    }
    --in_flight_;
    // `done` (and what it holds: the session) is released here, on this worker, once it returns.
    Done callback = std::move(done);
    callback(std::move(grammar), error);
  });
  return true;
}

void GrammarCompilePool::shutdown() {
  stopped_ = true;
  pool_.join();
}

}  // namespace plinth::server
