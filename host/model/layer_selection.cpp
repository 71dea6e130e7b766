// The first L blocks of a GGUF model (layer_selection.hpp).
#include "model/layer_selection.hpp"

#include <stdexcept>

#include "model/gguf.hpp"

namespace plinth {

int64_t gguf_block_index(const std::string& tensor_name) {
  static constexpr std::string_view kPrefix = "blk.";
  if (!tensor_name.starts_with(kPrefix)) return -1;
  int64_t n = 0;
  size_t i = kPrefix.size();
  const size_t digits_begin = i;
  for (; i < tensor_name.size() && tensor_name[i] >= '0' && tensor_name[i] <= '9'; ++i) {
    if (n > (int64_t{1} << 40)) return -1;  // no model has that many blocks
    n = n * 10 + (tensor_name[i] - '0');
  }
  if (i == digits_begin || i == tensor_name.size() || tensor_name[i] != '.') return -1;
  return n;
}

GgufWriter select_first_layers(const GgufFile& src, uint32_t layers) {
  const std::string arch = src.get_string("general.architecture");
  const std::string block_key = arch + ".block_count";
  const uint64_t blocks = src.get_uint(block_key);
  if (layers < 1 || layers >= blocks) {
    throw std::invalid_argument("layers " + std::to_string(layers) + " outside 1.." +
                                std::to_string(blocks > 0 ? blocks - 1 : 0) + ": " + src.path() +
                                " has " + std::to_string(blocks) +
                                " blocks and a draft keeps fewer");
  }
  GgufWriter w;
  for (const std::string& key : src.keys()) {
    GgufValue v = *src.find_value(key);
    if (key == block_key) {
      // get_uint accepted it: an unsigned type or a non-negative signed one; keep the type.
      if (gguf_is_signed(v.type)) {
        v.data = int64_t{layers};
      } else {
        v.data = uint64_t{layers};
      }
    } else if (key == "general.name" && v.type == GgufValueType::kString) {
      std::get<std::string>(v.data) += " (first " + std::to_string(layers) + " layers)";
    } else if (key.starts_with(arch + ".") && v.type == GgufValueType::kArray &&
               v.items().size() == blocks) {
      auto& items = std::get<std::vector<GgufValue>>(v.data);
      items.resize(layers);
    }
    w.add(key, std::move(v));
  }
  for (const GgufTensor& t : src.tensors()) {
    const int64_t block = gguf_block_index(t.name);
    if (block >= static_cast<int64_t>(layers)) continue;
    w.add_tensor(t.name, t.type, t.dims,
                 std::span<const std::byte>(t.data, static_cast<size_t>(t.nbytes)));
  }
  return w;
}

}  // namespace plinth
