// Tiny LLaMA-family GGUF files for the draft-backend tests, written with the project's GGUF
// writer (host/model/gguf_writer.hpp): valid for read_model_config, with a tokenizer.ggml.tokens
// vocabulary the test chooses. Tensor values are zeros (the test backend never reads them).
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <stdexcept>
#include <string>
#include <vector>

#include "model/ggml_type.hpp"
#include "model/gguf_writer.hpp"

namespace plinth_test {

struct TinyGguf {
  uint32_t layers = 2, hidden = 8, heads = 2, kv_heads = 1, ffn = 16;
  /// The vocabulary; its size is the model's vocab_size (token_embd has one row per token).
  std::vector<std::string> tokens = default_tokens(32);

  static std::vector<std::string> default_tokens(uint32_t n) {
    std::vector<std::string> t;
    for (uint32_t i = 0; i < n; ++i) {
      std::string token = "t";  // (not "t" + to_string: GCC 12's -Wrestrict false positive)
      token += std::to_string(i);
      t.push_back(std::move(token));
    }
    return t;
  }

  /// Writes the file at `path` and returns it.
  std::filesystem::path write(const std::filesystem::path& path) const {
    plinth::GgufWriter w;
    const uint64_t hd = hidden / heads, vocab = tokens.size();
    w.add_string("general.architecture", "llama");
    w.add_string("general.name", "tiny");
    w.add_u32("llama.block_count", layers);
    w.add_u32("llama.embedding_length", hidden);
    w.add_u32("llama.attention.head_count", heads);
    w.add_u32("llama.attention.head_count_kv", kv_heads);
    w.add_u32("llama.feed_forward_length", ffn);
    w.add_u32("llama.context_length", 128);
    w.add_f32("llama.attention.layer_norm_rms_epsilon", 1e-5f);
    w.add("tokenizer.ggml.tokens", plinth::gguf_string_array(tokens));
    auto add = [&](const std::string& name, std::vector<uint64_t> dims) {
      uint64_t n = 1;
      for (uint64_t d : dims) n *= d;
      w.add_tensor(name, plinth::GgmlType::kF32, std::move(dims),
                   std::vector<std::byte>(n * sizeof(float)));
    };
    add("token_embd.weight", {hidden, vocab});
    for (uint32_t l = 0; l < layers; ++l) {
      const std::string p = "blk." + std::to_string(l) + ".";
      add(p + "attn_norm.weight", {hidden});
      add(p + "attn_q.weight", {hidden, heads * hd});
      add(p + "attn_k.weight", {hidden, kv_heads * hd});
      add(p + "attn_v.weight", {hidden, kv_heads * hd});
      add(p + "attn_output.weight", {heads * hd, hidden});
      add(p + "ffn_norm.weight", {hidden});
      add(p + "ffn_gate.weight", {hidden, ffn});
      add(p + "ffn_up.weight", {hidden, ffn});
      add(p + "ffn_down.weight", {ffn, hidden});
    }
    add("output_norm.weight", {hidden});
    w.write_file(path.string());
    return path;
  }
};

/// A fresh directory under the system temp dir, removed with its files on destruction.
class ScratchDir {
 public:
  explicit ScratchDir(const std::string& prefix) {
    std::string tmpl = (std::filesystem::temp_directory_path() / (prefix + "_XXXXXX")).string();
    if (mkdtemp(tmpl.data()) == nullptr) throw std::runtime_error("mkdtemp failed");
    path_ = tmpl;
  }
  ~ScratchDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  ScratchDir(const ScratchDir&) = delete;
  ScratchDir& operator=(const ScratchDir&) = delete;
  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

}  // namespace plinth_test
