#include "fuzz_support.hpp"

#include <sys/mman.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <stdexcept>

#include "model/gguf_writer.hpp"
#include "model/synthetic_model.hpp"

namespace plinth::fuzz {

void crash_if(bool failed, const char* what) {
  if (!failed) return;
  std::fprintf(stderr, "fuzz invariant broken: %s\n", what);
  std::abort();
}

std::string ByteReader::bytes(size_t n) {
  n = std::min(n, remaining());
  std::string s(reinterpret_cast<const char*>(data_ + pos_), n);
  pos_ += n;
  return s;
}

std::string ByteReader::until(uint8_t sep) {
  std::string s;
  while (!empty()) {
    const uint8_t b = data_[pos_++];
    if (b == sep) break;
    s.push_back(static_cast<char>(b));
  }
  return s;
}

std::unique_ptr<GgufFile> open_gguf_bytes(std::string_view bytes) {
  // A fresh memfd per call: a mapping made from an earlier one stays valid.
  const int fd = memfd_create("plinth_fuzz_gguf", MFD_CLOEXEC);
  if (fd < 0) throw std::runtime_error("memfd_create failed");
  size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t n = ::write(fd, bytes.data() + done, bytes.size() - done);
    if (n <= 0) {
      ::close(fd);
      throw std::runtime_error("write to memfd failed");
    }
    done += static_cast<size_t>(n);
  }
  try {
    auto f = GgufFile::open("/proc/self/fd/" + std::to_string(fd));
    ::close(fd);
    return f;
  } catch (...) {
    ::close(fd);
    throw;
  }
}

namespace {

// SmolLM2-135M-Instruct's template, reduced to the ChatML shape ChatTemplate recognises.
constexpr const char* kChatMlTemplate =
    "{% for message in messages %}{% if loop.first and messages[0]['role'] != 'system' %}"
    "{{ '<|im_start|>system\\nYou are a helpful AI assistant named SmolLM.<|im_end|>\\n' }}"
    "{% endif %}{{'<|im_start|>' + message['role'] + '\\n' + message['content'] + '<|im_end|>' + "
    "'\\n'}}{% endfor %}{% if add_generation_prompt %}{{ '<|im_start|>assistant\\n' }}{% endif %}";

SharedModel load_shared_model() {
  SharedModel m;
  std::string path;
  if (const char* env = std::getenv("PLINTH_FUZZ_MODEL")) path = env;
#ifdef PLINTH_SOURCE_DIR
  if (path.empty()) {
    const std::string real = PLINTH_SOURCE_DIR "/models/SmolLM2-135M-Instruct.Q4_1.gguf";
    if (std::filesystem::exists(real)) path = real;
  }
#endif
  if (!path.empty()) {
    m.file = GgufFile::open(path);
    m.source = path;
  } else {
    GgufWriter w;
    add_synthetic_tokenizer(w);
    w.add_string("tokenizer.chat_template", kChatMlTemplate);
    const std::vector<uint8_t> bytes = w.build();
    m.file = open_gguf_bytes(
        std::string_view(reinterpret_cast<const char*>(bytes.data()), bytes.size()));
    m.source = "generated tokenizer (add_synthetic_tokenizer)";
  }
  m.tokenizer = std::make_unique<Tokenizer>(Tokenizer::from_gguf(*m.file));
  const std::string tmpl = m.file->find_string("tokenizer.chat_template").value_or(kChatMlTemplate);
  m.chat = std::make_unique<ChatTemplate>(ChatTemplate::from_template_text(tmpl, ""));
  return m;
}

}  // namespace

const SharedModel& shared_model() {
  static const SharedModel model = load_shared_model();
  return model;
}

}  // namespace plinth::fuzz
