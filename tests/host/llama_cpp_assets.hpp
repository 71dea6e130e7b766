#pragma once
// Where tools/fetch_llama_cpp_assets puts llama.cpp's tokenizer and chat-template test files
// (ggml-vocab-*.gguf with .inp/.out, models/templates/*.jinja): $PLINTH_CACHE (default
// ~/.cache/plinth)/llama.cpp-0.3.36-assets. ./dev's set-up fetches them; tests that need them skip
// with kLlamaCppAssetsMissing when the folder is incomplete.

#include <cstdlib>
#include <filesystem>
#include <string>

namespace plinth::test {

inline std::filesystem::path llama_cpp_assets_dir() {
  const char* cache = std::getenv("PLINTH_CACHE");
  const char* home = std::getenv("HOME");
  const std::filesystem::path root =
      cache && *cache ? std::filesystem::path(cache)
                      : std::filesystem::path(home ? home : ".") / ".cache" / "plinth";
  return root / "llama.cpp-0.3.36-assets";
}

/// True when the fetch finished (it writes COMPLETE last).
inline bool llama_cpp_assets_present() {
  return std::filesystem::exists(llama_cpp_assets_dir() / "COMPLETE");
}

inline constexpr const char* kLlamaCppAssetsMissing =
    "llama.cpp's test files are not fetched: run tools/fetch_llama_cpp_assets (./dev test does; "
    "it needs PyPI)";

}  // namespace plinth::test
