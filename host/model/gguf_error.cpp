#include "model/gguf_error.hpp"

namespace plinth {

GgufError::GgufError(const std::string& path, uint64_t offset, const std::string& field,
                     const std::string& what)
    : std::runtime_error(path + ": offset " + std::to_string(offset) + " (" + field + "): " + what),
      offset_(offset),
      field_(field),
      detail_(what) {}

}  // namespace plinth
