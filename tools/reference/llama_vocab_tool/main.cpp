// llama.cpp's own tokenizer as a command, for golden fixtures (tools/reference/tokenizer_fixture.py
// --vocab-tool): llama_vocab (src/llama-vocab.cpp of the llama.cpp that llama-cpp-python 0.3.36
// vendors) loaded from a GGUF as llama.cpp loads it, without building the rest of libllama.
//
//   vocab_tool MODEL.gguf < records
//
// stdin: records, each a mode byte, the text's length in bytes (decimal), a newline, then the text:
// 'T' = tokenize(text, add_special=false, parse_special=false), 'S' = the same with
// parse_special=true.
// stdout: one line of space-separated token ids per record. Built by build.sh.
#include <cstdio>
#include <iostream>
#include <iterator>
#include <string>
#include <vector>

#include "llama-arch.h"
#include "llama-model-loader.h"
#include "llama-vocab.h"

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: vocab_tool MODEL.gguf < records (mode, length, newline, text)\n");
    return 2;
  }
  std::vector<std::string> splits;
  llama_model_loader ml(nullptr, nullptr, nullptr, argv[1], splits, nullptr, LLAMA_LOAD_MODE_NONE,
                        /*check_tensors=*/false, /*no_alloc=*/true, /*load_mtp=*/false, nullptr,
                        nullptr);
  llama_vocab vocab;
  vocab.load(ml, LLM_KV(ml.get_arch()));
  const std::string all((std::istreambuf_iterator<char>(std::cin)),
                        std::istreambuf_iterator<char>());
  for (size_t pos = 0; pos < all.size();) {
    const char mode = all[pos];
    const size_t nl = all.find('\n', pos);
    const size_t len = std::stoul(all.substr(pos + 1, nl - pos - 1));
    const std::string text = all.substr(nl + 1, len);
    pos = nl + 1 + len;
    const auto ids = vocab.tokenize(text, false, mode == 'S');
    for (size_t i = 0; i < ids.size(); ++i) std::printf(i ? " %d" : "%d", ids[i]);
    std::printf("\n");
  }
  return 0;
}
