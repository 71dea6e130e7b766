// The engine notices a stuck scheduler (scheduler.h, the progress rule): a scheduler plugin that
// accepts requests and never schedules one makes step() throw within the stall limit, naming the
// rule, instead of spinning forever; the caller aborts the requests and the engine stays usable.
#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <memory>
#include <stdexcept>
#include <string>

#include "engine/engine.hpp"
#include "fake_model.hpp"
#include "runtime/host_context.hpp"
#include "runtime/logging.hpp"
#include "runtime/manifest.hpp"
#include "runtime/pipeline.hpp"

namespace plinth {
namespace {

namespace fs = std::filesystem;

TEST(EngineStall, AStuckSchedulerFailsItsRequestsInsteadOfSpinning) {
  const fs::path plugins = fs::path(PLINTH_BUILD_DIR) / "test_plugins";
  const std::string text = R"({"plugins": [
      {"kind": "backend", "library": ")" +
                           (plugins / "libplinth_fake_kv_backend.so").string() + R"("},
      {"kind": "kv_cache", "library": "kv_paged", "config": {"block_size": 4, "num_blocks": 16}},
      {"kind": "scheduler", "library": ")" +
                           (plugins / "libplinth_bad_sched_stuck.so").string() + R"("}]})";
  HostContext host{make_stderr_logger(spdlog::level::warn)};
  const Manifest manifest = parse_manifest(text, fs::temp_directory_path() / "engine_stall.json");
  plinth_model_desc desc = fake_model::model_desc();
  std::unique_ptr<Pipeline> pipeline = Pipeline::create(manifest, &desc, host);
  BackendRef b = pipeline->backend();
  plinth_error err{};
  ASSERT_EQ(b.vtable->allocate_kv(b.instance, 16, 4, &err), PLINTH_OK);
  EnginePlugins p;
  p.backend = b;
  KvCacheRef kv = pipeline->kv_cache();
  p.kv_cache = kv;
  SchedulerRef s = pipeline->scheduler();
  p.scheduler = s;
  EngineOptions eo;
  eo.context_length = 4096;
  eo.vocab_size = fake_model::kVocab;
  eo.max_stall_seconds = 0.05;
  Tokenizer tokenizer = fake_model::tiny_tokenizer();
  Engine engine(p, tokenizer, eo);

  GenerationRequest g;
  g.prompt = {1, 2, 3};
  g.params.temperature = 0.0f;
  g.params.max_tokens = 4;
  const uint64_t id = engine.add_request(g);

  // Empty steps while the request waits, then the stall error (bounded: 5 s of wall time).
  std::string what;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  while (what.empty() && std::chrono::steady_clock::now() < deadline) {
    try {
      EXPECT_TRUE(engine.step().empty());
    } catch (const std::runtime_error& e) {
      what = e.what();
    }
  }
  ASSERT_FALSE(what.empty()) << "step() kept returning nothing for 5 s";
  EXPECT_NE(what.find("scheduled nothing"), std::string::npos) << what;
  EXPECT_NE(what.find("1 requests wait"), std::string::npos) << what;
  EXPECT_NE(what.find("scheduler.h"), std::string::npos) << what;

  // The caller fails the request (as the server's fail_all does); the engine is idle and whole.
  engine.abort_request(id);
  std::vector<RequestOutput> out = engine.step();
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].finish_reason, "abort");
  EXPECT_FALSE(engine.has_unfinished());
  EXPECT_NO_THROW(engine.step());
}

}  // namespace
}  // namespace plinth
