// The fuzz targets' bodies (tests/fuzz/<target>.cpp, one each), called by the libFuzzer
// executables (PLINTH_FUZZ=ON) and by the ordinary replay test (tests/host/fuzz_replay), which runs
// every seed in tests/fuzz/corpus/<target>/ and every crash kept in
// tests/fuzz/regressions/<target>/ through the same function.
#pragma once

#include <cstddef>
#include <cstdint>

namespace plinth::fuzz {

/// One fuzz target: its name (the folder names under corpus/ and regressions/) and its body. A body
/// accepts any bytes; it returns normally for input the code under test rejects with its documented
/// error, and aborts (crash_if) when an invariant the code promises does not hold.
struct Target {
  const char* name;
  void (*run)(const uint8_t* data, size_t size);
};

void fuzz_gguf(const uint8_t* data, size_t size);
void fuzz_manifest(const uint8_t* data, size_t size);
void fuzz_json_schema(const uint8_t* data, size_t size);
void fuzz_request_body(const uint8_t* data, size_t size);
void fuzz_http_request(const uint8_t* data, size_t size);
void fuzz_tokenizer(const uint8_t* data, size_t size);
void fuzz_chat_template(const uint8_t* data, size_t size);
void fuzz_stop_strings(const uint8_t* data, size_t size);
/// Built when the grammar plugin's engine is (plugins/grammar_xgrammar, XGrammar fetched).
void fuzz_grammar(const uint8_t* data, size_t size);

}  // namespace plinth::fuzz

/// Defines libFuzzer's entry point as a call of `body` in the fuzzer build (PLINTH_LIBFUZZER);
/// nothing in the replay test, which links every target into one executable.
#ifdef PLINTH_LIBFUZZER
#define PLINTH_FUZZ_ENTRY(body)                                             \
  extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) { \
    body(data, size);                                                       \
    return 0;                                                               \
  }
#else
#define PLINTH_FUZZ_ENTRY(body)
#endif
