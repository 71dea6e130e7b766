// Stubs for the libllama / libggml symbols the vocab-only path links against but never calls.
#include <cstdio>
#include <cstdlib>
#include "ggml-backend.h"
#include "llama.h"
extern "C" {
ggml_backend_dev_t ggml_backend_dev_by_type(enum ggml_backend_dev_type) {
  return nullptr;
}
int llama_split_path(char*, size_t, const char*, int, int) {
  std::abort();
}
int llama_split_prefix(char*, size_t, const char*, int, int) {
  std::abort();
}
}
