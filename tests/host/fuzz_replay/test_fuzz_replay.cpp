// Replays the committed fuzz inputs (tests/fuzz/corpus/<target>/ and tests/fuzz/regressions/
// <target>/) through the fuzz targets' bodies: each must return normally, as under libFuzzer.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "fuzz_targets.hpp"

namespace {

namespace fs = std::filesystem;
using plinth::fuzz::Target;

const Target kTargets[] = {
    {"gguf", plinth::fuzz::fuzz_gguf},
    {"manifest", plinth::fuzz::fuzz_manifest},
    {"json_schema", plinth::fuzz::fuzz_json_schema},
    {"request_body", plinth::fuzz::fuzz_request_body},
    {"http_request", plinth::fuzz::fuzz_http_request},
    {"tokenizer", plinth::fuzz::fuzz_tokenizer},
    {"chat_template", plinth::fuzz::fuzz_chat_template},
    {"stop_strings", plinth::fuzz::fuzz_stop_strings},
#ifdef PLINTH_FUZZ_GRAMMAR
    {"grammar", plinth::fuzz::fuzz_grammar},
#endif
};

std::vector<fs::path> inputs(const std::string& target) {
  std::vector<fs::path> files;
  for (const char* kind : {"corpus", "regressions"}) {
    const fs::path dir = fs::path(PLINTH_SOURCE_DIR) / "tests/fuzz" / kind / target;
    if (!fs::is_directory(dir)) continue;
    for (const auto& e : fs::directory_iterator(dir)) {
      if (e.is_regular_file()) files.push_back(e.path());
    }
  }
  std::sort(files.begin(), files.end());
  return files;
}

class FuzzReplay : public ::testing::TestWithParam<Target> {};

TEST_P(FuzzReplay, EveryCommittedInputRunsClean) {
  const Target& t = GetParam();
  const std::vector<fs::path> files = inputs(t.name);
  ASSERT_FALSE(files.empty()) << "no seed corpus in tests/fuzz/corpus/" << t.name;
  for (const fs::path& f : files) {
    SCOPED_TRACE(f.string());
    std::ifstream in(f, std::ios::binary);
    const std::vector<char> bytes{std::istreambuf_iterator<char>(in), {}};
    EXPECT_NO_THROW(t.run(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size()));
  }
}

TEST_P(FuzzReplay, EmptyAndTinyInputsRunClean) {
  const Target& t = GetParam();
  const uint8_t bytes[] = {0, 1, 0xff, '{', '"'};
  for (size_t n = 0; n <= sizeof bytes; ++n) EXPECT_NO_THROW(t.run(bytes, n));
}

INSTANTIATE_TEST_SUITE_P(Targets, FuzzReplay, ::testing::ValuesIn(kTargets),
                         [](const ::testing::TestParamInfo<Target>& p) { return p.param.name; });

}  // namespace
