#include "tokenizer/token_attributes.hpp"

#include <algorithm>
#include <array>
#include <cctype>
#include <initializer_list>

namespace plinth {
namespace {

uint32_t attr_of_type(int32_t type) {
  switch (type) {
    case 1:
      return token_attr::kNormal;
    case 2:
      return token_attr::kUnknown;
    case 3:
      return token_attr::kControl;
    case 4:
      return token_attr::kUserDefined;
    case 5:
      return token_attr::kUnused;
    case 6:
      return token_attr::kByte;
    default:
      return token_attr::kUndefined;
  }
}

bool is_one_of(std::string_view text, std::initializer_list<std::string_view> list) {
  return std::find(list.begin(), list.end(), text) != list.end();
}

// llama.cpp's special_eog_ids texts (each also made control); they include every EOT/EOM text.
bool is_eog_text(std::string_view t) {
  return is_one_of(t, {"<|eot_id|>",
                       "<|im_end|>",
                       "<|end|>",
                       "<|return|>",
                       "<|call|>",
                       "<|flush|>",
                       "<|calls|>",
                       "<end_of_turn>",
                       "<|endoftext|>",
                       "</s>",
                       "<|eom_id|>",
                       "<EOT>",
                       "_<EOT>",
                       "[EOT]",
                       "[EOS]",
                       "<|end_of_text|>",
                       "<end_of_utterance>",
                       "<eos>",
                       "<turn|>",
                       "<|tool_response>",
                       "<\uFF5Cend\u2581of\u2581sentence\uFF5C>",
                       "[e~["});
}

// The FIM texts llama.cpp looks for when the GGUF does not name the token (pre, suf, mid, pad,
// rep, sep).
bool is_fim_text(std::string_view t, const bool has_id[6]) {
  static const std::array<std::initializer_list<std::string_view>, 6> lists = {{
      {"<|fim_prefix|>", "<fim-prefix>", "<fim_prefix>", "<\uFF5Cfim\u2581begin\uFF5C>", "<PRE>",
       "\u2581<PRE>", "<|code_prefix|>", "<|prefix|>"},
      {"<|fim_suffix|>", "<fim-suffix>", "<fim_suffix>", "<\uFF5Cfim\u2581hole\uFF5C>", "<SUF>",
       "\u2581<SUF>", "<|code_suffix|>", "<|suffix|>"},
      {"<|fim_middle|>", "<fim-middle>", "<fim_middle>", "<\uFF5Cfim\u2581end\uFF5C>", "<MID>",
       "\u2581<MID>", "<|code_middle|>", "<|middle|>"},
      {"<|fim_pad|>", "<fim-pad>", "<fim_pad>", "<PAD>", "[PAD]"},
      {"<|fim_repo|>", "<|repo_name|>", "<fim-repo>", "<REPO>", "<reponame>"},
      {"<|file_sep|>"},
  }};
  for (size_t k = 0; k < lists.size(); ++k) {
    if (!has_id[k] && is_one_of(t, lists[k])) return true;
  }
  return false;
}

bool names_phi3(std::string name) {
  std::transform(name.begin(), name.end(), name.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return name.find("phi-3") != std::string::npos || name.find("phi3") != std::string::npos;
}

}  // namespace

std::vector<uint32_t> token_attributes(const std::vector<std::string>& tokens,
                                       const std::vector<int32_t>& types,
                                       const TokenAttributeInputs& in) {
  std::vector<uint32_t> attrs(tokens.size(), token_attr::kNormal);
  for (size_t i = 0; i < types.size() && i < tokens.size(); ++i) attrs[i] = attr_of_type(types[i]);
  for (size_t i = 0; i < tokens.size(); ++i) {
    const std::string& t = tokens[i];
    if (is_eog_text(t) || is_fim_text(t, in.has_fim_id)) attrs[i] |= token_attr::kControl;
    if (is_one_of(t, {"<|channel|>", "<|message|>", "<|start|>", "<|constrain|>"})) {
      attrs[i] = token_attr::kUserDefined;
    }
  }
  if (names_phi3(in.model_name)) {
    for (size_t i = 0; i < tokens.size(); ++i) {
      const std::string& t = tokens[i];
      if ((attrs[i] & token_attr::kSpecial) != 0 || t == "</s>") attrs[i] |= token_attr::kRstrip;
      if (t == "<unk>" || t == "<s>" || t == "<|endoftext|>") attrs[i] &= ~token_attr::kRstrip;
    }
  }
  return attrs;
}

}  // namespace plinth
