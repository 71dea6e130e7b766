#include "runtime/draft_model.hpp"

#include <algorithm>
#include <system_error>

#include <nlohmann/json.hpp>

namespace plinth {

namespace {

const char* const kFix = "use a draft model trained with the same tokenizer";

// The token strings, or nullptr when the file has no tokenizer.ggml.tokens string array.
const std::vector<GgufValue>* tokens_of(const GgufFile& f) {
  const GgufValue* v = f.find_value("tokenizer.ggml.tokens");
  if (v == nullptr || v->type != GgufValueType::kArray || v->elem_type != GgufValueType::kString) {
    return nullptr;
  }
  return &v->items();
}

// A token for a message: JSON-quoted, invalid UTF-8 replaced.
std::string quoted(const GgufValue& token) {
  return nlohmann::json(std::get<std::string>(token.data))
      .dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

}  // namespace

LoadedModel load_draft_model(const Manifest& manifest, const PluginEntry& draft) {
  const std::string at = draft.json_path + ".model";
  if (!draft.model) throw ManifestError(manifest.file, at, "required on a draft backend");
  std::error_code ec;
  if (!std::filesystem::is_regular_file(*draft.model, ec)) {
    throw ManifestError(
        manifest.file, at,
        "no draft model file " + draft.model->string() +
            ": fix the path (relative to the manifest's folder) or fetch the model");
  }
  try {
    return load_model(*draft.model);
  } catch (const GgufError& e) {
    throw ManifestError(manifest.file, at,
                        "the draft model cannot be used: " + std::string(e.what()) +
                            "; use a LLaMA-family GGUF model with the target's tokenizer");
  }
}

void check_same_vocabulary(const Manifest& manifest, const PluginEntry& draft,
                           const GgufFile& target, uint32_t target_vocab,
                           const GgufFile& draft_file, uint32_t draft_vocab) {
  const std::string at = draft.json_path + ".model";
  const std::string models =
      "the draft model " + draft_file.path() + " and the target model " + target.path();
  if (target_vocab != draft_vocab) {
    throw ManifestError(
        manifest.file, at,
        models + " have different vocabularies: " + std::to_string(draft_vocab) +
            " tokens in the draft, " + std::to_string(target_vocab) +
            " in the target; speculative decoding needs the same vocabulary: " + kFix);
  }
  const std::vector<GgufValue>* t = tokens_of(target);
  const std::vector<GgufValue>* d = tokens_of(draft_file);
  if (t == nullptr || d == nullptr) {
    throw ManifestError(manifest.file, at,
                        std::string("the ") + (d == nullptr ? "draft" : "target") + " model " +
                            (d == nullptr ? draft_file.path() : target.path()) +
                            " has no tokenizer.ggml.tokens, so the vocabularies cannot be "
                            "compared; " +
                            kFix + " (a GGUF file that carries its tokenizer)");
  }
  const size_t n = std::min(t->size(), d->size());
  for (size_t i = 0; i < n; ++i) {
    if (std::get<std::string>((*t)[i].data) != std::get<std::string>((*d)[i].data)) {
      throw ManifestError(manifest.file, at,
                          models + " have different vocabularies: token id " + std::to_string(i) +
                              " is " + quoted((*d)[i]) + " in the draft and " + quoted((*t)[i]) +
                              " in the target (the first id that differs); " + kFix);
    }
  }
  if (t->size() != d->size()) {
    throw ManifestError(manifest.file, at,
                        models + " have different vocabularies: tokenizer.ggml.tokens holds " +
                            std::to_string(d->size()) + " tokens in the draft and " +
                            std::to_string(t->size()) + " in the target (token id " +
                            std::to_string(n) + " is the first one only one of them has); " + kFix);
  }
}

}  // namespace plinth
