#include "server/async_engine.hpp"

#include <chrono>
#include <exception>
#include <stdexcept>

#include "app/engine_host.hpp"
#include "runtime/host_context.hpp"
#include "server/server_metrics.hpp"
#include "tokenizer/tokenizer.hpp"

namespace plinth::server {

namespace {

// The periodic engine log line's clock, seconds.
double seconds_now() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

}  // namespace

AsyncEngine::AsyncEngine(EngineHost& host, HostContext& context, Options options)
    : host_(host),
      context_(context),
      options_(options),
      metrics_(std::make_unique<ServerMetrics>(context.metrics(), context.logger(),
                                               host.max_model_len())) {
  metrics_->update(host_.engine().stats(), seconds_now());
  thread_ = std::thread([this] { run(); });
}

AsyncEngine::AsyncEngine(std::unique_ptr<HostContext> owned_context,
                         std::unique_ptr<EngineHost> owned_host, Options options)
    : AsyncEngine(*owned_host, *owned_context, options) {
  owned_context_ = std::move(owned_context);
  owned_host_ = std::move(owned_host);
}

std::unique_ptr<AsyncEngine> AsyncEngine::load(const std::string& manifest, Options options) {
  auto context = std::make_unique<HostContext>();
  EngineHost::Options ho;
  ho.manifest = manifest;
  auto host = EngineHost::load(ho, *context);
  return std::unique_ptr<AsyncEngine>(
      new AsyncEngine(std::move(context), std::move(host), options));
}

AsyncEngine::~AsyncEngine() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
    draining_ = true;
  }
  wake_.notify_all();
  if (thread_.joinable()) thread_.join();
}

std::vector<uint64_t> AsyncEngine::submit(std::vector<GenerationRequest> requests,
                                          Callback callback, bool logprobs) {
  auto cb = std::make_shared<Callback>(std::move(callback));
  std::vector<uint64_t> handles;
  {
    std::lock_guard lock(mutex_);
    if (draining_) throw Overloaded(true, "the server is shutting down");
    if (pending_ + requests.size() > options_.max_pending) {
      throw Overloaded(false, "the server is at its limit of " +
                                  std::to_string(options_.max_pending) +
                                  " pending requests; retry later");
    }
    for (size_t i = 0; i < requests.size(); ++i) {
      uint64_t h = next_handle_++;
      handles.push_back(h);
      admitted_[h] = {i, cb, logprobs};
      commands_.push_back({Command::add, h, std::move(requests[i])});
    }
    pending_ += requests.size();
  }
  wake_.notify_one();
  return handles;
}

void AsyncEngine::abort(uint64_t handle) {
  {
    std::lock_guard lock(mutex_);
    if (admitted_.count(handle) == 0) return;
    commands_.push_back({Command::abort, handle, {}});
  }
  wake_.notify_one();
}

void AsyncEngine::begin_drain() {
  std::lock_guard lock(mutex_);
  draining_ = true;
}

bool AsyncEngine::draining() const {
  std::lock_guard lock(mutex_);
  return draining_;
}

size_t AsyncEngine::num_pending() const {
  std::lock_guard lock(mutex_);
  return pending_;
}

bool AsyncEngine::wait_idle(double timeout_s) {
  std::unique_lock lock(mutex_);
  return idle_.wait_for(lock, std::chrono::duration<double>(timeout_s),
                        [&] { return pending_ == 0; });
}

void AsyncEngine::finish(uint64_t handle) {
  engine_id_.erase(handle);
  {
    std::lock_guard lock(mutex_);
    admitted_.erase(handle);
    pending_--;
    if (pending_ == 0) idle_.notify_all();
  }
}

void AsyncEngine::process(std::deque<Command>& commands) {
  Engine& engine = host_.engine();
  for (Command& c : commands) {
    if (c.kind == Command::abort) {
      if (auto it = engine_id_.find(c.handle); it != engine_id_.end()) {
        engine.abort_request(it->second);
      }
      continue;
    }
    Admitted target;
    {
      std::lock_guard lock(mutex_);
      target = admitted_.at(c.handle);
    }
    auto num_prompt = static_cast<uint32_t>(c.request.prompt.size());
    try {
      uint64_t id = engine.add_request(std::move(c.request));
      live_[id] = {c.handle, target.index, target.callback, target.logprobs, num_prompt};
      engine_id_[c.handle] = id;
    } catch (const std::exception& e) {
      StreamEvent ev;
      ev.finished = true;
      ev.finish_reason = "error";
      ev.error = e.what();
      // Engine::add_request throws invalid_argument for a request it refuses (its fault).
      if (dynamic_cast<const std::invalid_argument*>(&e) != nullptr) ev.error_status = 400;
      ev.num_prompt_tokens = num_prompt;
      (*target.callback)(target.index, std::move(ev));
      finish(c.handle);
    }
  }
}

void AsyncEngine::deliver(const std::vector<RequestOutput>& outputs) {
  Engine& engine = host_.engine();
  const Tokenizer& tok = host_.tokenizer();
  for (const RequestOutput& o : outputs) {
    auto it = live_.find(o.request_id);
    if (it == live_.end()) continue;
    Live& live = it->second;
    const Sequence* seq = engine.find(o.request_id);
    StreamEvent ev;
    ev.text_delta = o.text_delta;
    ev.token_ids = o.new_token_ids;
    ev.trigger_offset = o.trigger_offset;
    ev.finished = o.finished;
    ev.finish_reason = o.finish_reason;
    ev.stop_string = o.stop_string;
    if (o.finish_reason == "error") {  // a plugin broke its contract on this request alone,
      ev.error = o.error;              // or its logits row turned non-finite
      if (!o.error_param.empty()) {    // its own sampling parameter did that: its fault
        ev.error_status = 400;
        ev.error_param = o.error_param;
        context_.logger().info("request refused: {}", o.error);
      } else {
        context_.logger().error("request failed: {}", o.error);
      }
    }
    ev.num_prompt_tokens = live.num_prompt_tokens;
    if (seq != nullptr) {
      ev.num_generated_tokens = seq->timings().num_generated_tokens;
      const auto& samples = seq->samples();
      if (live.logprobs && samples.size() >= o.new_token_ids.size()) {
        for (size_t i = samples.size() - o.new_token_ids.size(); i < samples.size(); ++i) {
          const Sampler::Result& s = samples[i];
          TokenLogprob lp;
          lp.token = s.token;
          lp.text = tok.decode(std::span<const int32_t>(&s.token, 1));
          lp.logprob = s.logprob;
          for (const auto& [id, logprob] : s.top_logprobs) {
            lp.top.emplace_back(tok.decode(std::span<const int32_t>(&id, 1)), logprob);
          }
          ev.logprobs.push_back(std::move(lp));
        }
      }
      metrics_->on_tokens(o.request_id, seq->timings(), o.new_token_ids.size());
      if (o.finished) metrics_->on_finished(o.request_id, seq->timings(), o.finish_reason);
    }
    (*live.callback)(live.index, std::move(ev));
    if (o.finished) {
      uint64_t handle = live.handle;
      live_.erase(it);
      engine.release(o.request_id);
      finish(handle);
    }
  }
}

void AsyncEngine::fail_all(const std::string& why) {
  Engine& engine = host_.engine();
  for (auto& [id, live] : live_) {
    engine.abort_request(id);
    StreamEvent ev;
    ev.finished = true;
    ev.finish_reason = "error";
    ev.error = why;
    ev.num_prompt_tokens = live.num_prompt_tokens;
    // Counted as failed, and its per-request metrics state dropped with it.
    if (const Sequence* seq = engine.find(id); seq != nullptr) {
      metrics_->on_finished(id, seq->timings(), "error");
    }
    (*live.callback)(live.index, std::move(ev));
  }
  try {
    engine.step();  // reports the aborts; frees nothing more
  } catch (const std::exception&) {
  }
  for (auto& [id, live] : live_) {
    engine.release(id);
    finish(live.handle);
  }
  live_.clear();
}

void AsyncEngine::run() {
  Engine& engine = host_.engine();
  std::deque<Command> commands;
  for (;;) {
    {
      std::unique_lock lock(mutex_);
      wake_.wait(lock, [&] { return stopping_ || !commands_.empty() || engine.has_unfinished(); });
      commands.swap(commands_);
      if (stopping_) {
        // Abort everything still queued or running; the callbacks get "abort".
        for (Command& c : commands) {
          if (c.kind == Command::add) {
            Admitted a = admitted_.at(c.handle);
            StreamEvent ev;
            ev.finished = true;
            ev.finish_reason = "abort";
            lock.unlock();
            (*a.callback)(a.index, std::move(ev));
            lock.lock();
            admitted_.erase(c.handle);
            pending_--;
          }
        }
        commands.clear();
        lock.unlock();
        for (auto& [id, live] : live_) engine.abort_request(id);
        try {
          deliver(engine.step());
        } catch (const std::exception& e) {
          context_.logger().error("engine step failed during shutdown: {}", e.what());
        }
        return;
      }
    }
    process(commands);
    commands.clear();
    try {
      std::vector<RequestOutput> outputs;
      if (engine.has_unfinished() || !live_.empty()) outputs = engine.step();
      // The gauges before the callbacks: a response goes out only after /metrics counts its
      // request gone (running, waiting, used KV blocks), so a client that reads /metrics once
      // its response is complete never sees it still running.
      metrics_->update(engine.stats(), seconds_now());
      deliver(outputs);
    } catch (const std::exception& e) {
      context_.logger().error("engine step failed: {}; failing {} requests", e.what(),
                              live_.size());
      fail_all(e.what());
    }
  }
}

}  // namespace plinth::server
