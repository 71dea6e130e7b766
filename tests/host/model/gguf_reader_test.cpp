// Valid GGUF files: every metadata value type round-trips through the writer and the reader,
// typed getters convert or refuse as documented, tensors land at aligned offsets with their data.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "gguf_test_files.hpp"
#include "model/gguf.hpp"

namespace plinth {
namespace {

using VT = GgufValueType;

class GgufReader : public ::testing::Test {
 protected:
  std::unique_ptr<GgufFile> open(const GgufWriter& w) {
    return GgufFile::open(dir_.write("t.gguf", w.build()));
  }
  test::TempDir dir_;
};

TEST_F(GgufReader, EveryScalarTypeRoundTrips) {
  GgufWriter w;
  w.add("u8", gguf_uint(VT::kUint8, 255));
  w.add("i8", gguf_int(VT::kInt8, -128));
  w.add("u16", gguf_uint(VT::kUint16, 65535));
  w.add("i16", gguf_int(VT::kInt16, -32768));
  w.add("u32", gguf_uint(VT::kUint32, 4000000000u));
  w.add("i32", gguf_int(VT::kInt32, -2000000000));
  w.add("u64", gguf_uint(VT::kUint64, std::numeric_limits<uint64_t>::max()));
  w.add("i64", gguf_int(VT::kInt64, std::numeric_limits<int64_t>::min()));
  w.add("f32", gguf_float(VT::kFloat32, 9.999999747378752e-06f));
  w.add("f64", gguf_float(VT::kFloat64, -1.0e300));
  w.add_bool("t", true);
  w.add_bool("f", false);
  w.add_string("s", std::string("h\xc3\xa9llo\0world", 12));
  w.add_string("empty", "");
  const auto f = open(w);

  EXPECT_EQ(f->version(), 3u);
  EXPECT_EQ(f->get_uint("u8"), 255u);
  EXPECT_EQ(f->get_int("i8"), -128);
  EXPECT_EQ(f->get_uint("u16"), 65535u);
  EXPECT_EQ(f->get_int("i16"), -32768);
  EXPECT_EQ(f->get_uint("u32"), 4000000000u);
  EXPECT_EQ(f->get_int("u32"), 4000000000);
  EXPECT_EQ(f->get_int("i32"), -2000000000);
  EXPECT_EQ(f->get_uint("u64"), std::numeric_limits<uint64_t>::max());
  EXPECT_EQ(f->get_int("i64"), std::numeric_limits<int64_t>::min());
  EXPECT_EQ(static_cast<float>(f->get_float("f32")), 9.999999747378752e-06f);
  EXPECT_EQ(f->get_float("f64"), -1.0e300);
  EXPECT_TRUE(f->get_bool("t"));
  EXPECT_FALSE(f->get_bool("f"));
  EXPECT_EQ(f->get_string("s"), std::string("h\xc3\xa9llo\0world", 12));
  EXPECT_EQ(f->get_string("empty"), "");

  const std::vector<std::string> want_keys = {"u8",  "i8",  "u16", "i16", "u32", "i32", "u64",
                                              "i64", "f32", "f64", "t",   "f",   "s",   "empty"};
  EXPECT_EQ(f->keys(), want_keys);
  EXPECT_EQ(f->type_of("i16"), VT::kInt16);
  EXPECT_EQ(f->type_of("f64"), VT::kFloat64);
  EXPECT_TRUE(f->tensors().empty());
}

TEST_F(GgufReader, GettersRefuseOtherTypesNamingTheKey) {
  GgufWriter w;
  w.add("neg", gguf_int(VT::kInt32, -1));
  w.add("big", gguf_uint(VT::kUint64, std::numeric_limits<uint64_t>::max()));
  w.add_u32("n", 7);
  w.add_string("s", "x");
  const auto f = open(w);
  EXPECT_EQ(f->get_uint("n"), 7u);
  EXPECT_EQ(f->get_int("n"), 7);
  try {
    f->get_uint("neg");
    ADD_FAILURE();
  } catch (const GgufError& e) {
    EXPECT_EQ(e.field(), "neg");
    EXPECT_EQ(e.offset(), 24u);  // the first pair starts right after the header
    EXPECT_NE(std::string(e.what()).find("found int32"), std::string::npos) << e.what();
  }
  EXPECT_THROW(f->get_int("big"), GgufError);
  EXPECT_THROW(f->get_float("n"), GgufError);
  EXPECT_THROW(f->get_string("n"), GgufError);
  EXPECT_THROW(f->get_bool("s"), GgufError);
  EXPECT_THROW(f->get_string_array("s"), GgufError);
  try {
    f->get_string("missing.key");
    ADD_FAILURE();
  } catch (const GgufError& e) {
    EXPECT_EQ(e.field(), "missing.key");
    EXPECT_NE(std::string(e.what()).find("missing"), std::string::npos);
  }
  EXPECT_FALSE(f->has("missing.key"));
  EXPECT_EQ(f->find_value("missing.key"), nullptr);
  EXPECT_EQ(f->find_string("missing.key"), std::nullopt);
  EXPECT_EQ(f->find_uint("missing.key"), std::nullopt);
  EXPECT_EQ(f->find_float("missing.key"), std::nullopt);
  EXPECT_EQ(f->find_bool("missing.key"), std::nullopt);
  EXPECT_EQ(f->find_uint("n"), 7u);
  EXPECT_EQ(f->find_string("s"), "x");
  EXPECT_THROW(f->find_uint("s"), GgufError);  // present with another type is an error
  EXPECT_THROW(f->find_bool("n"), GgufError);
}

TEST_F(GgufReader, EveryArrayTypeRoundTrips) {
  GgufWriter w;
  auto uints = [](VT t, std::vector<uint64_t> v) {
    std::vector<GgufValue> items;
    for (uint64_t x : v) items.push_back(gguf_uint(t, x));
    return gguf_array(t, std::move(items));
  };
  auto ints = [](VT t, std::vector<int64_t> v) {
    std::vector<GgufValue> items;
    for (int64_t x : v) items.push_back(gguf_int(t, x));
    return gguf_array(t, std::move(items));
  };
  auto floats = [](VT t, std::vector<double> v) {
    std::vector<GgufValue> items;
    for (double x : v) items.push_back(gguf_float(t, x));
    return gguf_array(t, std::move(items));
  };
  w.add("a_u8", uints(VT::kUint8, {0, 7, 255}));
  w.add("a_i8", ints(VT::kInt8, {-1, 0, 127}));
  w.add("a_u16", uints(VT::kUint16, {1, 65535}));
  w.add("a_i16", ints(VT::kInt16, {-300, 300}));
  w.add("a_u32", uints(VT::kUint32, {4000000000u}));
  w.add("a_i32", ints(VT::kInt32, {1, -2, 3}));
  w.add("a_u64", uints(VT::kUint64, {uint64_t{1} << 40}));
  w.add("a_i64", ints(VT::kInt64, {-(int64_t{1} << 40)}));
  w.add("a_f32", floats(VT::kFloat32, {0.5, -2.25}));
  w.add("a_f64", floats(VT::kFloat64, {1e-300, 3.0}));
  w.add("a_bool", gguf_array(VT::kBool, {gguf_bool(true), gguf_bool(false), gguf_bool(true)}));
  w.add("a_str", gguf_string_array({"<|im_start|>", "", "\xc4\xa0the"}));
  w.add("a_empty", gguf_array(VT::kInt32, {}));
  // [[1, 2], [3]] and [["x"], []]
  w.add("a_nested", gguf_array(VT::kArray, {ints(VT::kInt32, {1, 2}), ints(VT::kInt32, {3})}));
  w.add("a_nested_str", gguf_array(VT::kArray, {gguf_string_array({"x"}), gguf_string_array({})}));
  const auto f = open(w);

  EXPECT_EQ(f->get_int_array("a_u8"), (std::vector<int64_t>{0, 7, 255}));
  EXPECT_EQ(f->get_int_array("a_i8"), (std::vector<int64_t>{-1, 0, 127}));
  EXPECT_EQ(f->get_int_array("a_u16"), (std::vector<int64_t>{1, 65535}));
  EXPECT_EQ(f->get_int_array("a_i16"), (std::vector<int64_t>{-300, 300}));
  EXPECT_EQ(f->get_int_array("a_u32"), (std::vector<int64_t>{4000000000}));
  EXPECT_EQ(f->get_int_array("a_i32"), (std::vector<int64_t>{1, -2, 3}));
  EXPECT_EQ(f->get_int_array("a_u64"), (std::vector<int64_t>{int64_t{1} << 40}));
  EXPECT_EQ(f->get_int_array("a_i64"), (std::vector<int64_t>{-(int64_t{1} << 40)}));
  EXPECT_EQ(f->get_float_array("a_f32"), (std::vector<double>{0.5, -2.25}));
  EXPECT_EQ(f->get_float_array("a_f64"), (std::vector<double>{1e-300, 3.0}));
  const GgufValue* bools = f->find_value("a_bool");
  ASSERT_NE(bools, nullptr);
  EXPECT_EQ(bools->elem_type, VT::kBool);
  ASSERT_EQ(bools->items().size(), 3u);
  EXPECT_TRUE(std::get<bool>(bools->items()[0].data));
  EXPECT_FALSE(std::get<bool>(bools->items()[1].data));
  EXPECT_EQ(f->get_string_array("a_str"),
            (std::vector<std::string>{"<|im_start|>", "", "\xc4\xa0the"}));
  EXPECT_TRUE(f->get_int_array("a_empty").empty());
  EXPECT_EQ(f->array_size("a_str"), 3u);
  EXPECT_THROW(f->get_int_array("a_str"), GgufError);
  EXPECT_THROW(f->get_float_array("a_i32"), GgufError);
  EXPECT_THROW(f->get_string_array("a_i32"), GgufError);

  const GgufValue* nested = f->find_value("a_nested");
  ASSERT_NE(nested, nullptr);
  EXPECT_EQ(nested->type, VT::kArray);
  EXPECT_EQ(nested->elem_type, VT::kArray);
  ASSERT_EQ(nested->items().size(), 2u);
  EXPECT_EQ(nested->items()[0].elem_type, VT::kInt32);
  ASSERT_EQ(nested->items()[0].items().size(), 2u);
  EXPECT_EQ(std::get<int64_t>(nested->items()[0].items()[1].data), 2);
  EXPECT_EQ(std::get<int64_t>(nested->items()[1].items()[0].data), 3);
  const GgufValue* nested_s = f->find_value("a_nested_str");
  ASSERT_NE(nested_s, nullptr);
  EXPECT_EQ(std::get<std::string>(nested_s->items()[0].items()[0].data), "x");
  EXPECT_TRUE(nested_s->items()[1].items().empty());
  EXPECT_THROW(f->get_int_array("a_nested"), GgufError);
}

// Checks every tensor's placement against the alignment and its bytes against the writer.
void expect_tensors_placed(const GgufFile& f, uint64_t alignment) {
  EXPECT_EQ(f.alignment(), alignment);
  EXPECT_EQ(f.data_offset() % alignment, 0u);
  for (size_t i = 0; i < f.tensors().size(); ++i) {
    const GgufTensor& t = f.tensors()[i];
    EXPECT_EQ((t.offset - f.data_offset()) % alignment, 0u) << t.name;
    EXPECT_LE(t.offset + t.nbytes, f.size());
    for (uint64_t j = 0; j < t.nbytes; ++j) {
      ASSERT_EQ(static_cast<uint8_t>(t.data[j]), test::pattern_byte(i, j))
          << t.name << " byte " << j;
    }
  }
}

TEST_F(GgufReader, TensorsWithDefaultAlignment) {
  GgufWriter w;
  w.add_string("general.architecture", "llama");
  test::add_pattern_tensor(w, "f32", {3, 5}, GgmlType::kF32);
  test::add_pattern_tensor(w, "f16", {7}, GgmlType::kF16);
  test::add_pattern_tensor(w, "bf16", {2, 3, 4, 5}, GgmlType::kBF16);
  test::add_pattern_tensor(w, "q4_0", {64, 3}, GgmlType::kQ4_0);
  test::add_pattern_tensor(w, "q4_1", {32, 1, 2}, GgmlType::kQ4_1);
  test::add_pattern_tensor(w, "q8_0", {96}, GgmlType::kQ8_0);
  const auto f = open(w);
  auto marks = test::marks(w);
  ASSERT_EQ(f->tensors().size(), 6u);
  expect_tensors_placed(*f, 32);
  EXPECT_EQ(f->data_offset(), marks["data"]);

  const GgufTensor* q41 = f->find_tensor("q4_1");
  ASSERT_NE(q41, nullptr);
  EXPECT_EQ(q41->type, GgmlType::kQ4_1);
  EXPECT_EQ(q41->dims, (std::vector<uint64_t>{32, 1, 2}));
  EXPECT_EQ(q41->num_elements(), 64u);
  EXPECT_EQ(q41->nbytes, 2u * 20u);
  EXPECT_EQ(q41->offset, marks["data:q4_1"]);
  EXPECT_EQ(f->find_tensor("bf16")->nbytes, 2u * 3 * 4 * 5 * 2);
  EXPECT_EQ(f->find_tensor("q4_0")->nbytes, 6u * 18u);
  EXPECT_EQ(f->find_tensor("q8_0")->nbytes, 3u * 34u);
  EXPECT_EQ(f->find_tensor("f16")->nbytes, 14u);
  EXPECT_EQ(f->find_tensor("f32")->num_elements(), 15u);
  EXPECT_EQ(f->find_tensor("nope"), nullptr);
  EXPECT_EQ(f->tensors()[0].name, "f32");  // file order
}

TEST_F(GgufReader, TensorsWithCustomAlignment) {
  GgufWriter w;
  w.add_u32("general.alignment", 64);
  EXPECT_EQ(w.alignment(), 64u);
  test::add_pattern_tensor(w, "a", {3}, GgmlType::kF32);
  test::add_pattern_tensor(w, "b", {5}, GgmlType::kF16);
  test::add_pattern_tensor(w, "c", {32}, GgmlType::kQ8_0);
  const auto f = open(w);
  expect_tensors_placed(*f, 64);
  EXPECT_EQ(f->find_tensor("b")->offset - f->data_offset(), 64u);
  EXPECT_EQ(f->find_tensor("c")->offset - f->data_offset(), 128u);
}

TEST_F(GgufReader, VersionTwoIsAccepted) {
  GgufWriter w;  // writes version 3; v2 has the same layout
  w.add_u32("x", 1);
  test::Bytes b = w.build();
  test::put<uint32_t>(b, 4, 2);
  EXPECT_EQ(GgufFile::open(dir_.write("v2.gguf", b))->version(), 2u);
}

TEST(GgmlType, Traits) {
  EXPECT_EQ(ggml_block_size(GgmlType::kQ4_1), 32u);
  EXPECT_EQ(ggml_type_size(GgmlType::kQ4_1), 20u);
  EXPECT_EQ(ggml_type_size(GgmlType::kQ4_0), 18u);
  EXPECT_EQ(ggml_type_size(GgmlType::kQ8_0), 34u);
  EXPECT_EQ(ggml_type_size(GgmlType::kBF16), 2u);
  EXPECT_EQ(ggml_block_size(GgmlType::kF32), 1u);
  EXPECT_STREQ(ggml_type_name(GgmlType::kBF16), "BF16");
  EXPECT_THROW(ggml_block_size(static_cast<GgmlType>(16)), std::invalid_argument);  // IQ2_XXS
  EXPECT_EQ(ggml_block_size(GgmlType::kQ4_K), 256u);
  EXPECT_EQ(ggml_type_size(GgmlType::kQ6_K), 210u);
  EXPECT_STREQ(ggml_type_name_any(12), "Q4_K");
  EXPECT_EQ(ggml_type_name_any(1000), nullptr);
}

}  // namespace
}  // namespace plinth
