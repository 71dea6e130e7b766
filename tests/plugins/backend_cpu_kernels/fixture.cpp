#include "fixture.hpp"

#include <cstring>
#include <fstream>
#include <iterator>
#include <nlohmann/json.hpp>
#include <stdexcept>

namespace plinth::cpu::test {
namespace {

const std::string kDir = std::string(PLINTH_SOURCE_DIR) + "/tests/fixtures/quant/";

std::vector<float> read_floats(const std::string& path, size_t count) {
  const auto bytes = read_bytes(path);
  if (bytes.size() != count * sizeof(float)) {
    throw std::runtime_error(path + ": expected " + std::to_string(count * sizeof(float)) +
                             " bytes, found " + std::to_string(bytes.size()) +
                             "; regenerate with tools/reference/quant_fixture.py");
  }
  std::vector<float> out(count);
  std::memcpy(out.data(), bytes.data(), bytes.size());
  return out;
}

QuantFixture load() {
  std::ifstream in(kDir + "index.json");
  if (!in) throw std::runtime_error("cannot open " + kDir + "index.json");
  const auto index = nlohmann::json::parse(in);
  QuantFixture f;
  f.rows = index.at("rows").get<int64_t>();
  f.cols = index.at("cols").get<int64_t>();
  f.n = index.at("n").get<int64_t>();
  f.x = read_floats(kDir + index.at("x").get<std::string>(), static_cast<size_t>(f.n * f.cols));
  f.x_q8_0 = read_bytes(kDir + index.at("x_q8_0").get<std::string>());
  for (WeightType t : kAllTypes) {
    const auto& e = index.at("types").at(weight_type_name(t));
    QuantFixture::Weights w;
    w.raw = read_bytes(kDir + e.at("weights").get<std::string>());
    if (static_cast<int64_t>(w.raw.size()) != f.rows * row_bytes(t, f.cols)) {
      throw std::runtime_error(std::string("fixture ") + weight_type_name(t) + ": size mismatch");
    }
    w.dequant = read_floats(kDir + e.at("dequantized").get<std::string>(),
                            static_cast<size_t>(f.rows * f.cols));
    f.weights.emplace(t, std::move(w));
  }
  return f;
}

}  // namespace

std::vector<uint8_t> read_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("cannot open " + path);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

const QuantFixture& quant_fixture() {
  static const QuantFixture f = load();
  return f;
}

}  // namespace plinth::cpu::test
