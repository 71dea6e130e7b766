#pragma once
// AsyncEngine: the engine on its own thread, for servers. The network side submits requests and
// aborts through a bounded queue (mutex + condition variable); the engine thread drains it before
// every step, runs Engine::step() while anything is unfinished, and sleeps when idle. Each
// request's news goes to the callback given at submit(), called on the engine thread — a server
// posts it onto its connection's executor (boost::asio::post) so that neither side blocks the
// other.
//
// Engine methods are only ever called on the engine thread.

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <string>
#include <thread>
#include <unordered_map>
#include <utility>
#include <vector>

#include "engine/engine.hpp"

namespace plinth {
class EngineHost;
class HostContext;
}  // namespace plinth

namespace plinth::server {

class ServerMetrics;

/// One sampled token's logprob, with the token's text (raw bytes; may be a partial UTF-8 char).
struct TokenLogprob {
  int32_t token = 0;
  std::string text;
  float logprob = 0;
  std::vector<std::pair<std::string, float>> top;  ///< alternatives, most likely first
};

/// News of one request, delivered to its callback.
struct StreamEvent {
  std::string text_delta;          ///< whole UTF-8 characters, stop strings removed
  std::vector<int32_t> token_ids;  ///< tokens sampled this step
  /// The request's grammar trigger was sampled this step (RequestOutput::trigger_offset):
  /// text_delta before this offset is free text, from it on the grammar's output.
  std::optional<size_t> trigger_offset;
  std::vector<TokenLogprob> logprobs;  ///< one per new token when logprobs were asked
  bool finished = false;
  std::string finish_reason;  ///< "stop", "length", "abort"; "error" with `error` set
  int32_t stop_string = -1;   ///< RequestOutput::stop_string: the index of the matched stop string
  std::string error;          ///< what went wrong when the engine failed the request
  int error_status = 500;     ///< HTTP status of `error`: 400 when the engine refused the request
                              ///< itself (e.g. it can never fit the KV pool) or its own sampling
                              ///< parameter drove its logits non-finite, else 500
  std::string error_param;    ///< with a 400 for a non-finite row: the request field at fault
  uint32_t num_prompt_tokens = 0;
  uint32_t num_generated_tokens = 0;  ///< so far
};

/// Thrown by submit(): the pending bound is reached (429) or the engine is draining (503).
class Overloaded : public std::runtime_error {
 public:
  Overloaded(bool draining, const std::string& what)
      : std::runtime_error(what), draining_(draining) {}
  bool draining() const { return draining_; }

 private:
  bool draining_;
};

class AsyncEngine {
 public:
  struct Options {
    /// Requests admitted and not yet finished (waiting + running), at most. Past it, submit()
    /// throws Overloaded instead of letting memory grow.
    size_t max_pending = 256;
  };
  /// Called on the engine thread with (index of the request within its submit() group, event).
  /// Must not block; it should hand the event to another executor.
  using Callback = std::function<void(size_t index, StreamEvent event)>;

  /// Serves `host`'s engine. `host` and `context` must outlive this object. Starts the thread.
  AsyncEngine(EngineHost& host, HostContext& context, Options options);
  AsyncEngine(EngineHost& host, HostContext& context) : AsyncEngine(host, context, Options{}) {}
  /// Loads the manifest (EngineHost::load; same errors) and owns the host it made.
  static std::unique_ptr<AsyncEngine> load(const std::string& manifest, Options options);
  static std::unique_ptr<AsyncEngine> load(const std::string& manifest) {
    return load(manifest, Options{});
  }
  /// Stops the thread; unfinished requests are aborted (their callbacks get "abort").
  ~AsyncEngine();
  AsyncEngine(const AsyncEngine&) = delete;
  AsyncEngine& operator=(const AsyncEngine&) = delete;

  /// Queues requests as one group (all admitted or none: an n > 1 request is n engine requests).
  /// Returns one handle per request. Thread-safe. Throws Overloaded. Invalid requests are reported
  /// through the callback (finish_reason "error").
  /// `logprobs`: events carry each new token's logprob (and params.logprobs alternatives).
  std::vector<uint64_t> submit(std::vector<GenerationRequest> requests, Callback callback,
                               bool logprobs = false);
  /// Aborts a request: its KV blocks are freed before the next step. Thread-safe; unknown or
  /// finished handles are ignored.
  void abort(uint64_t handle);

  /// Refuses new requests from now on (Overloaded with draining() = true); running ones finish.
  void begin_drain();
  bool draining() const;
  /// Requests admitted and not finished.
  size_t num_pending() const;
  /// Blocks until num_pending() is 0 or `timeout_s` passed; true when idle.
  bool wait_idle(double timeout_s);

  EngineHost& host() { return host_; }
  HostContext& context() { return context_; }

 private:
  struct Command {
    enum { add, abort } kind;
    uint64_t handle;
    GenerationRequest request;  // add
  };
  struct Live {
    uint64_t handle;
    size_t index;
    std::shared_ptr<Callback> callback;
    bool logprobs;
    uint32_t num_prompt_tokens;
  };
  AsyncEngine(std::unique_ptr<HostContext> owned_context, std::unique_ptr<EngineHost> owned_host,
              Options options);

  void run();
  void process(std::deque<Command>& commands);
  void deliver(const std::vector<RequestOutput>& outputs);
  void fail_all(const std::string& why);
  void finish(uint64_t handle);

  std::unique_ptr<HostContext> owned_context_;
  std::unique_ptr<EngineHost> owned_host_;
  EngineHost& host_;
  HostContext& context_;
  Options options_;
  std::unique_ptr<ServerMetrics> metrics_;

  mutable std::mutex mutex_;
  std::condition_variable wake_, idle_;
  std::deque<Command> commands_;
  struct Admitted {
    size_t index;
    std::shared_ptr<Callback> callback;
    bool logprobs;
  };
  std::unordered_map<uint64_t, Admitted> admitted_;  // handle → request, until finished
  uint64_t next_handle_ = 1;
  size_t pending_ = 0;
  bool draining_ = false, stopping_ = false;

  // Engine thread only.
  std::unordered_map<uint64_t, Live> live_;           // engine id → request
  std::unordered_map<uint64_t, uint64_t> engine_id_;  // handle → engine id
  std::thread thread_;
};

}  // namespace plinth::server
