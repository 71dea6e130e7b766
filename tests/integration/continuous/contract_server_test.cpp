// The server stays up when a plugin breaks its contract (docs/architecture.md, "When a plugin
// breaks its contract"): through the AsyncEngine (the server's engine thread), a request whose
// batch a backend answers without logits gets an error naming the plugin and the rule, a request
// waiting meanwhile and the next request are served normally; no KV block stays held. The model is
// a one-layer synthetic file (the misbehaving backend, test_backend's fake model, reads no
// weights).
#include <gtest/gtest.h>

#include <condition_variable>
#include <filesystem>
#include <fstream>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "app/engine_host.hpp"
#include "gguf_test_files.hpp"
#include "model/synthetic_model.hpp"
#include "runtime/host_context.hpp"
#include "runtime/logging.hpp"
#include "server/async_engine.hpp"

namespace plinth {
namespace {

namespace fs = std::filesystem;

/// Every event of one request, gathered on the engine thread.
class Events {
 public:
  server::AsyncEngine::Callback callback() {
    return [this](size_t, server::StreamEvent ev) {
      std::lock_guard lock(mutex_);
      tokens_.insert(tokens_.end(), ev.token_ids.begin(), ev.token_ids.end());
      if (ev.finished) last_ = std::move(ev);
      done_ = done_ || last_.finished;
      cv_.notify_all();
    };
  }
  /// The final event (waits at most 30 s for it).
  server::StreamEvent last() {
    std::unique_lock lock(mutex_);
    EXPECT_TRUE(cv_.wait_for(lock, std::chrono::seconds(30), [&] { return done_; }));
    return last_;
  }
  std::vector<int32_t> tokens() {
    std::lock_guard lock(mutex_);
    return tokens_;
  }

 private:
  std::mutex mutex_;
  std::condition_variable cv_;
  std::vector<int32_t> tokens_;
  server::StreamEvent last_;
  bool done_ = false;
};

GenerationRequest greedy(std::vector<int32_t> prompt, int max_tokens) {
  GenerationRequest g;
  g.prompt = std::move(prompt);
  g.params.temperature = 0.0f;
  g.params.max_tokens = max_tokens;
  return g;
}

TEST(AsyncEngineContract, AFailedRequestGetsAnErrorAndTheNextIsServed) {
  test::TempDir dir;
  SyntheticModelOptions mo;
  mo.layers = 1;  // the host checks the tensors the llama forward pass needs
  const fs::path model = dir.path() / "synthetic_l1.gguf";
  make_synthetic_model(mo).write_file(model.string());
  const fs::path manifest = dir.path() / "manifest.json";
  std::ofstream(manifest) << R"({"model": ")" << model.string() << R"(", "plugins": [
      {"kind": "backend", "library": ")"
                          << (fs::path(PLINTH_BUILD_DIR) / "test_plugins" /
                              "libplinth_bad_backend_null_logits.so")
                                 .string()
                          << R"(", "config": {"trigger_token": 63}},
      {"kind": "kv_cache", "library": "kv_paged", "config": {"block_size": 16, "num_blocks": 64}},
      {"kind": "scheduler", "library": "scheduler_continuous", "config": {"max_num_seqs": 1}}]})";

  HostContext context{make_stderr_logger(spdlog::level::off)};
  EngineHost::Options ho;
  ho.manifest = manifest;
  std::unique_ptr<EngineHost> host = EngineHost::load(ho, context);
  {
    server::AsyncEngine engine(*host, context);
    // One sequence at a time: `waiting` is queued behind `bad`, outside its batch, and must be
    // served (failing every request in flight, as for a plugin call's error status, would end it).
    Events bad, waiting, good;
    engine.submit({greedy({1, 63, 2}, 4)}, bad.callback());
    engine.submit({greedy({20, 21}, 3)}, waiting.callback());
    const server::StreamEvent failed = bad.last();
    EXPECT_EQ(failed.finish_reason, "error");
    EXPECT_EQ(failed.error_status, 500);
    EXPECT_NE(failed.error.find("backend 'bad_backend_null_logits' returned no logits"),
              std::string::npos)
        << failed.error;
    EXPECT_NE(failed.error.find("plinth/backend.h"), std::string::npos) << failed.error;

    EXPECT_EQ(waiting.last().finish_reason, "length");
    EXPECT_EQ(waiting.tokens(), (std::vector<int32_t>{22, 23, 24}));  // test_backend: t -> t + 1

    engine.submit({greedy({10, 11, 12}, 4)}, good.callback());
    const server::StreamEvent served = good.last();
    EXPECT_EQ(served.finish_reason, "length") << served.error;
    EXPECT_TRUE(served.error.empty()) << served.error;
    EXPECT_EQ(good.tokens(), (std::vector<int32_t>{13, 14, 15, 16}));
    EXPECT_TRUE(engine.wait_idle(30));
  }  // the engine thread stops
  const EngineStats s = host->engine().stats();
  EXPECT_EQ(s.kv.num_free_blocks, s.kv.num_blocks);
}

}  // namespace
}  // namespace plinth
