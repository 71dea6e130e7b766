// mistral_tokens_model IN.gguf OUT.gguf TEMPLATE.jinja: a test model whose vocabulary holds
// Mistral's tool-calling markers as control tokens. SmolLM2's vocabulary has no [TOOL_CALLS]
// (served with Mistral Nemo's template, the markers are plain text), so the tool-calling tests of
// that format could not reach the control-token path. This copies IN (same vocabulary size, same
// tensors and bytes, every other metadata pair) with:
//   - seven of SmolLM2's unused control tokens (ids 3-9: <repo_name> ... <issue_comment>, which
//     only its code pre-training used) renamed to [INST], [/INST], [TOOL_CALLS],
//     [AVAILABLE_TOOLS], [/AVAILABLE_TOOLS], [TOOL_RESULTS], [/TOOL_RESULTS]; each must be a
//     control token in IN (token type 3), else the tool refuses;
//   - tokenizer.chat_template set to TEMPLATE's text (Mistral Nemo's real template);
//   - general.name suffixed " (Mistral tool tokens)".
// Written at test time into the build folder (ctest fixture mistral_tokens_model), never
// committed. Exit 0 written, 2 bad usage, 1 failure (message on stderr).
#include <cstdint>
#include <cstdio>
#include <exception>
#include <fstream>
#include <iterator>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "model/gguf.hpp"
#include "model/gguf_writer.hpp"

namespace {

using plinth::GgufValue;

constexpr int64_t kControl = 3;  // GGUF tokenizer.ggml.token_type CONTROL
const std::vector<std::pair<int64_t, std::string>> kRenames = {{3, "[INST]"},
                                                               {4, "[/INST]"},
                                                               {5, "[TOOL_CALLS]"},
                                                               {6, "[AVAILABLE_TOOLS]"},
                                                               {7, "[/AVAILABLE_TOOLS]"},
                                                               {8, "[TOOL_RESULTS]"},
                                                               {9, "[/TOOL_RESULTS]"}};

int64_t type_of(const GgufValue& v) {
  if (const auto* i = std::get_if<int64_t>(&v.data)) return *i;
  return static_cast<int64_t>(std::get<uint64_t>(v.data));
}

std::string read_text(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error(path + ": cannot be read");
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

void write_model(const std::string& in, const std::string& out, const std::string& tmpl) {
  const auto src = plinth::GgufFile::open(in);
  const GgufValue* types = src->find_value("tokenizer.ggml.token_type");
  const GgufValue* tokens = src->find_value("tokenizer.ggml.tokens");
  if (types == nullptr || tokens == nullptr) {
    throw std::runtime_error(in + ": no tokenizer.ggml.tokens / token_type");
  }
  for (const auto& [id, text] : kRenames) {
    if (static_cast<size_t>(id) >= types->items().size() ||
        type_of(types->items()[static_cast<size_t>(id)]) != kControl) {
      throw std::runtime_error(in + ": token " + std::to_string(id) +
                               " is not a control token; this tool renames SmolLM2's unused "
                               "control tokens 3-9");
    }
  }
  plinth::GgufWriter w;
  for (const std::string& key : src->keys()) {
    GgufValue v = *src->find_value(key);
    if (key == "tokenizer.ggml.tokens") {
      auto& items = std::get<std::vector<GgufValue>>(v.data);
      for (const auto& [id, text] : kRenames) items[static_cast<size_t>(id)].data = text;
    } else if (key == "tokenizer.chat_template") {
      v.data = tmpl;
    } else if (key == "general.name" && v.type == plinth::GgufValueType::kString) {
      std::get<std::string>(v.data) += " (Mistral tool tokens)";
    }
    w.add(key, std::move(v));
  }
  if (!w.has("tokenizer.chat_template")) w.add_string("tokenizer.chat_template", tmpl);
  for (const plinth::GgufTensor& t : src->tensors()) {
    w.add_tensor(t.name, t.type, t.dims,
                 std::span<const std::byte>(t.data, static_cast<size_t>(t.nbytes)));
  }
  w.write_file(out);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 4) {
    std::fprintf(stderr, "usage: mistral_tokens_model IN.gguf OUT.gguf TEMPLATE.jinja\n");
    return 2;
  }
  try {
    write_model(argv[1], argv[2], read_text(argv[3]));
  } catch (const std::exception& e) {
    std::fprintf(stderr, "mistral_tokens_model: %s\n", e.what());
    return 1;
  }
  return 0;
}
