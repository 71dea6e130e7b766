#pragma once
// What the grammar tests on the real model share: the model file, a manifest with
// manifests/cpu_structured.json's numerics (optionally a prefix cache and an n-gram speculator),
// an EngineHost loaded from it, and the test fixture that skips without the model.

#include <filesystem>
#include <fstream>
#include <memory>
#include <string>

#include <gtest/gtest.h>

#include "app/engine_host.hpp"
#include "runtime/host_context.hpp"
#include "runtime/logging.hpp"

namespace plinth::grammar_model {

namespace fs = std::filesystem;

inline const fs::path kModel =
    fs::path(PLINTH_SOURCE_DIR) / "models/SmolLM2-135M-Instruct.Q4_1.gguf";

/// Writes `<temp>/<dir>/<name>.json`: backend_cpu (2 threads, auto matmul, f16 KV), kv_paged
/// (block 16), scheduler_continuous (16 sequences), grammar_xgrammar; `prefix`: prefix_radix;
/// `ngram`: spec_decode's n-gram speculator (k 4, n 1..3). Returns its path.
inline fs::path write_manifest(const std::string& dir, const std::string& name, bool prefix,
                               bool ngram) {
  const fs::path folder = fs::temp_directory_path() / dir;
  fs::create_directories(folder);
  const fs::path file = folder / (name + ".json");
  std::ofstream out(file);
  out << R"({"model": ")" << kModel.string() << R"(", "plugins": [
    {"kind": "backend", "library": "backend_cpu",
     "config": {"threads": 2, "matmul": "auto", "kv_dtype": "f16"}},
    {"kind": "kv_cache", "library": "kv_paged", "config": {"block_size": 16}},
    {"kind": "scheduler", "library": "scheduler_continuous", "config": {"max_num_seqs": 16}},)";
  if (prefix) out << R"({"kind": "prefix_cache", "library": "prefix_radix"},)";
  if (ngram) {
    out << R"({"kind": "speculator", "library": "spec_decode", "config": {"method": "ngram",
               "num_speculative_tokens": 4, "min_n": 1, "max_n": 3}},)";
  }
  out << R"({"kind": "grammar", "library": "grammar_xgrammar"}]})";
  return file;
}

inline std::unique_ptr<EngineHost> load(HostContext& host, const fs::path& manifest) {
  EngineHost::Options o;
  o.manifest = manifest;
  return EngineHost::load(o, host);
}

/// A test on the real model: skipped, naming tools/fetch_model, when the file is missing.
class ModelTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!fs::exists(kModel)) {
      GTEST_SKIP() << "model missing: run tools/fetch_model (" << kModel << ")";
    }
  }
  HostContext host_{make_stderr_logger(spdlog::level::warn)};
};

}  // namespace plinth::grammar_model
