#pragma once
#include <cstdint>

namespace plinth {

/// Values of GGUF `tokenizer.ggml.token_type` (llama.cpp `llama_token_type`).
enum class TokenType : int32_t {
  kUndefined = 0,
  kNormal = 1,
  kUnknown = 2,
  kControl = 3,      // <|im_start|>, <|endoftext|>: never produced from user text
  kUserDefined = 4,  // added tokens whose text is output as is
  kUnused = 5,
  kByte = 6,  // SentencePiece byte fallback <0xNN>
};

}  // namespace plinth
