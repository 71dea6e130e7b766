// GGUF reader: arbitrary bytes as a model file; on success, the LLaMA config, tokenizer and chat
// template readers over its metadata, and every typed getter over every key.
#include <exception>
#include <string_view>

#include "chat/chat_template.hpp"
#include "fuzz_support.hpp"
#include "fuzz_targets.hpp"
#include "model/model_config.hpp"
#include "tokenizer/tokenizer.hpp"

namespace plinth::fuzz {

void fuzz_gguf(const uint8_t* data, size_t size) {
  std::unique_ptr<GgufFile> f;
  try {
    f = open_gguf_bytes(std::string_view(reinterpret_cast<const char*>(data), size));
  } catch (const GgufError&) {
    return;
  }
  for (const GgufTensor& t : f->tensors()) {
    crash_if(t.offset + t.nbytes > f->size(), "tensor data past the end of the file");
    crash_if(f->find_tensor(t.name) == nullptr, "tensor not found by its name");
  }
  for (const std::string& key : f->keys()) {
    crash_if(!f->has(key), "key listed but not found");
    // Each getter either returns or throws GgufError for the wrong type.
    try {
      (void)f->get_string(key);
    } catch (const GgufError&) {
    }
    try {
      (void)f->get_uint(key);
    } catch (const GgufError&) {
    }
    try {
      (void)f->get_int(key);
    } catch (const GgufError&) {
    }
    try {
      (void)f->get_float(key);
    } catch (const GgufError&) {
    }
    try {
      (void)f->get_bool(key);
    } catch (const GgufError&) {
    }
    try {
      (void)f->get_string_array(key);
    } catch (const GgufError&) {
    }
    try {
      (void)f->get_int_array(key);
    } catch (const GgufError&) {
    }
    try {
      (void)f->get_float_array(key);
    } catch (const GgufError&) {
    }
  }
  try {
    (void)read_model_config(*f);
  } catch (const std::runtime_error&) {
  }
  try {
    const Tokenizer tok = Tokenizer::from_gguf(*f);
    (void)tok.encode("Hello, world! 123", true);
  } catch (const std::runtime_error&) {
  } catch (const std::invalid_argument&) {
  }
  try {
    if (auto tmpl = f->find_string("tokenizer.chat_template")) {
      const ChatTemplate chat = ChatTemplate::from_template_text(*tmpl, "");
      (void)chat.render_text({{"user", "hi"}}, true);
    }
  } catch (const std::runtime_error&) {
  }
}

}  // namespace plinth::fuzz

PLINTH_FUZZ_ENTRY(plinth::fuzz::fuzz_gguf)
