// Malformed GGUF files: each is a GgufError naming the byte offset and the field, never a crash
// or an allocation sized by a bogus count.
#include <gtest/gtest.h>

#include <limits>
#include <random>

#include "gguf_test_files.hpp"
#include "model/gguf.hpp"
#include "plinth/ggml_format.hpp"

namespace plinth {
namespace {

using test::Bytes;
using test::put;

// A small valid file: three kv pairs (string, array, u32) and two tensors; the data of the last
// one is followed by zero padding to the alignment (as ggml writes it).
GgufWriter base_writer() {
  GgufWriter w;
  w.add_string("general.architecture", "llama");
  w.add("tok", gguf_string_array({"a", "bc", "def"}));
  w.add_u32("general.quantization_version", 2);
  test::add_pattern_tensor(w, "a.weight", {4, 2}, GgmlType::kF32);
  test::add_pattern_tensor(w, "b.weight", {32, 2}, GgmlType::kQ8_0);
  return w;
}

class GgufMalformed : public ::testing::Test {
 protected:
  // Opens `b`, expects a GgufError at `offset` whose field contains `field` and whose message
  // contains `what`, the offset and the field.
  void expect_error(const Bytes& b, uint64_t offset, const std::string& field,
                    const std::string& what) {
    const std::string path = dir_.write("bad.gguf", b);
    try {
      GgufFile::open(path);
      ADD_FAILURE() << "opened a malformed file; expected an error at offset " << offset << " ("
                    << field << ")";
    } catch (const GgufError& e) {
      const std::string msg = e.what();
      EXPECT_EQ(e.offset(), offset) << msg;
      EXPECT_NE(e.field().find(field), std::string::npos) << "field '" << e.field() << "': " << msg;
      EXPECT_NE(msg.find("offset " + std::to_string(offset)), std::string::npos) << msg;
      EXPECT_NE(msg.find(e.field()), std::string::npos) << msg;
      EXPECT_NE(msg.find(path), std::string::npos) << msg;
      EXPECT_NE(msg.find(what), std::string::npos) << "expected '" << what << "' in: " << msg;
    }
  }

  test::TempDir dir_;
};

TEST_F(GgufMalformed, BaseFileIsValid) {
  GgufWriter w = base_writer();
  const auto f = GgufFile::open(dir_.write("ok.gguf", w.build()));
  EXPECT_EQ(f->tensors().size(), 2u);
}

TEST_F(GgufMalformed, EmptyFile) {
  expect_error({}, 0, "magic", "truncated");
}

TEST_F(GgufMalformed, BadMagic) {
  Bytes b = base_writer().build();
  b[3] = 'X';
  expect_error(b, 0, "magic", "bad magic");
}

TEST_F(GgufMalformed, UnsupportedVersion) {
  Bytes b = base_writer().build();
  put<uint32_t>(b, 4, 1);
  expect_error(b, 4, "version", "unsupported GGUF version 1");
  put<uint32_t>(b, 4, 4);
  expect_error(b, 4, "version", "supported: 2, 3");
}

TEST_F(GgufMalformed, BigEndianFile) {
  Bytes b = base_writer().build();
  put<uint32_t>(b, 4, 0x03000000);  // what a big-endian v3 file reads as
  expect_error(b, 4, "version", "big-endian");
}

TEST_F(GgufMalformed, TruncatedHeader) {
  Bytes b = base_writer().build();
  b.resize(12);
  expect_error(b, 8, "tensor_count", "truncated");
}

TEST_F(GgufMalformed, KvCountPastEnd) {
  GgufWriter w = base_writer();
  Bytes b = w.build();
  auto m = test::marks(w);
  put<uint64_t>(b, m["kv_count"], uint64_t{1} << 60);
  expect_error(b, 16, "metadata_kv_count", "cannot fit");
}

TEST_F(GgufMalformed, TensorCountPastEnd) {
  GgufWriter w = base_writer();
  Bytes b = w.build();
  auto m = test::marks(w);
  put<uint64_t>(b, m["tensor_count"], std::numeric_limits<uint64_t>::max());
  expect_error(b, 8, "tensor_count", "cannot fit");
}

TEST_F(GgufMalformed, KeyLengthPastEnd) {
  GgufWriter w = base_writer();
  Bytes b = w.build();
  auto m = test::marks(w);
  const uint64_t at = m["kv:general.quantization_version"];
  put<uint64_t>(b, at, uint64_t{1} << 62);
  expect_error(b, at, "metadata[2].key", "points past the end");
}

TEST_F(GgufMalformed, StringValueLengthPastEnd) {
  GgufWriter w = base_writer();
  Bytes b = w.build();
  auto m = test::marks(w);
  const uint64_t at = m["kv:general.architecture.value"];
  put<uint64_t>(b, at, b.size());
  expect_error(b, at, "general.architecture", "string length");
}

TEST_F(GgufMalformed, ArrayCountPastEnd) {
  GgufWriter w = base_writer();
  Bytes b = w.build();
  auto m = test::marks(w);
  const uint64_t at = m["kv:tok.value"] + 4;
  put<uint64_t>(b, at, uint64_t{1} << 58);
  expect_error(b, at, "tok.count", "points past the end");
}

TEST_F(GgufMalformed, ArrayElementStringPastEnd) {
  GgufWriter w = base_writer();
  Bytes b = w.build();
  auto m = test::marks(w);
  const uint64_t at = m["kv:tok.value"] + 12 + 9;  // second element, after "a"
  put<uint64_t>(b, at, uint64_t{1} << 40);
  expect_error(b, at, "tok[1]", "string length");
}

TEST_F(GgufMalformed, UnknownValueType) {
  GgufWriter w = base_writer();
  Bytes b = w.build();
  auto m = test::marks(w);
  const uint64_t at = m["kv:general.quantization_version.type"];
  put<uint32_t>(b, at, 13);
  expect_error(b, at, "general.quantization_version.type", "unknown value type 13");
}

TEST_F(GgufMalformed, UnknownArrayElementType) {
  GgufWriter w = base_writer();
  Bytes b = w.build();
  auto m = test::marks(w);
  const uint64_t at = m["kv:tok.value"];
  put<uint32_t>(b, at, 77);
  expect_error(b, at, "tok.element_type", "unknown value type 77");
}

TEST_F(GgufMalformed, BoolNeitherZeroNorOne) {
  GgufWriter w = base_writer();
  w.add_bool("flag", true);
  Bytes b = w.build();
  auto m = test::marks(w);
  put<uint8_t>(b, m["kv:flag.value"], 2);
  expect_error(b, m["kv:flag.value"], "flag", "bool value 2");
}

TEST_F(GgufMalformed, ArraysNestedTooDeep) {
  GgufWriter w = base_writer();
  GgufValue v = gguf_array(GgufValueType::kInt32, {gguf_int(GgufValueType::kInt32, 1)});
  for (int i = 0; i < 9; ++i) v = gguf_array(GgufValueType::kArray, {v});
  w.add("deep", v);
  Bytes b = w.build();
  auto m = test::marks(w);
  // Depth 0 is the value itself; the 9th nested array header (8 levels of 12 bytes in) fails.
  expect_error(b, m["kv:deep.value"] + uint64_t{8 * 12}, "deep[0][0]", "nested deeper than 8");
}

TEST_F(GgufMalformed, EmptyKey) {
  GgufWriter w;  // refuses an empty key: write "k", then set its length to 0
  w.add_u32("k", 1);
  Bytes b = w.build();
  put<uint64_t>(b, 24, 0);
  expect_error(b, 24, "metadata[0].key", "empty key");
}

TEST_F(GgufMalformed, DuplicateKey) {
  GgufWriter w = base_writer();
  w.add_u32("general.quantization_versioX", 3);  // the writer refuses a repeated key
  Bytes b = w.build();
  auto m = test::marks(w);
  test::rename_key(b, m["kv:general.quantization_versioX"], "general.quantization_version");
  expect_error(b, m["kv:general.quantization_versioX"], "general.quantization_version",
               "duplicate metadata key");
}

TEST_F(GgufMalformed, DuplicateTensorName) {
  GgufWriter w = base_writer();
  test::add_pattern_tensor(w, "a.weighX", {4}, GgmlType::kF32);  // the writer refuses repeats
  Bytes b = w.build();
  auto m = test::marks(w);
  test::rename_key(b, m["tensor:a.weighX"], "a.weight");  // a tensor info starts with its name
  expect_error(b, m["tensor:a.weighX"], "tensor[2].name", "duplicate tensor name");
}

TEST_F(GgufMalformed, TooManyDims) {
  GgufWriter w = base_writer();
  Bytes b = w.build();
  auto m = test::marks(w);
  put<uint32_t>(b, m["a.weight.n_dims"], 5);
  expect_error(b, m["a.weight.n_dims"], "a.weight.n_dims", "n_dims 5 outside 1..4");
}

TEST_F(GgufMalformed, ZeroDims) {
  GgufWriter w = base_writer();
  Bytes b = w.build();
  auto m = test::marks(w);
  put<uint32_t>(b, m["b.weight.n_dims"], 0);
  expect_error(b, m["b.weight.n_dims"], "b.weight.n_dims", "n_dims 0");
}

TEST_F(GgufMalformed, DimensionZero) {
  GgufWriter w = base_writer();
  Bytes b = w.build();
  auto m = test::marks(w);
  put<uint64_t>(b, m["a.weight.dims"] + 8, 0);
  expect_error(b, m["a.weight.dims"] + 8, "a.weight.dims[1]", "dimension is 0");
}

TEST_F(GgufMalformed, ElementCountOverflow) {
  GgufWriter w = base_writer();
  Bytes b = w.build();
  auto m = test::marks(w);
  put<uint64_t>(b, m["a.weight.dims"], uint64_t{1} << 40);
  put<uint64_t>(b, m["a.weight.dims"] + 8, uint64_t{1} << 40);
  expect_error(b, m["a.weight.dims"] + 8, "a.weight.dims[1]", "overflows");
}

TEST_F(GgufMalformed, UnknownTensorType) {
  GgufWriter w = base_writer();
  Bytes b = w.build();
  auto m = test::marks(w);
  put<uint32_t>(b, m["a.weight.type"], 99);
  expect_error(b, m["a.weight.type"], "a.weight.type",
               "tensor type 99 (unknown to ggml) is not supported; supported: F32, F16, Q4_0, "
               "Q4_1, Q5_0, Q5_1, Q8_0, Q2_K, Q3_K, Q4_K, Q5_K, Q6_K, IQ4_NL, IQ4_XS, BF16");
}

TEST_F(GgufMalformed, UnsupportedKnownTensorType) {
  GgufWriter w = base_writer();
  Bytes b = w.build();
  auto m = test::marks(w);
  put<uint32_t>(b, m["b.weight.type"], 16);
  expect_error(b, m["b.weight.type"], "b.weight.type", "tensor type 16 (IQ2_XXS)");
  put<uint32_t>(b, m["b.weight.type"], 15);  // Q8_K: ggml's activation type, never a weight
  expect_error(b, m["b.weight.type"], "b.weight.type", "tensor type 15 (Q8_K)");
}

// A super-block type whose row is not a whole number of 256-element blocks is named.
TEST_F(GgufMalformed, KQuantRowNotMultipleOfSuperBlock) {
  GgufWriter w = base_writer();
  Bytes b = w.build();
  auto m = test::marks(w);
  put<uint32_t>(b, m["b.weight.type"], 12);
  expect_error(b, m["b.weight.dims"], "b.weight.dims[0]",
               "is not a multiple of the Q4_K block size 256");
}

TEST_F(GgufMalformed, RowNotMultipleOfBlock) {
  GgufWriter w = base_writer();
  Bytes b = w.build();
  auto m = test::marks(w);
  put<uint64_t>(b, m["b.weight.dims"], 16);
  expect_error(b, m["b.weight.dims"], "b.weight.dims[0]", "Q8_0 block size 32");
}

TEST_F(GgufMalformed, MisalignedTensorOffset) {
  GgufWriter w = base_writer();
  Bytes b = w.build();
  auto m = test::marks(w);
  put<uint64_t>(b, m["b.weight.offset"], 40);
  expect_error(b, m["b.weight.offset"], "b.weight.offset", "not a multiple of the alignment 32");
}

TEST_F(GgufMalformed, TensorDataPastEndOfFile) {
  GgufWriter w = base_writer();
  Bytes b = w.build();
  auto m = test::marks(w);
  b.resize(m["end:b.weight"] - 1);  // the last data byte and the padding after it cut off
  expect_error(b, m["b.weight.offset"], "b.weight.offset", "past the end of the file");
}

// Every type of the format table opens with its block geometry, and a truncated K-quant / IQ4
// tensor is an error naming it, never a read past the mapping.
TEST_F(GgufMalformed, EveryTableTypeOpensAndTruncationIsNamed) {
  for (const ggml::Format& fmt : ggml::kFormats) {
    GgufWriter w = base_writer();
    const auto type = static_cast<GgmlType>(fmt.id);
    const uint64_t elems = fmt.block_elems == 1 ? 256 : uint64_t{fmt.block_elems};
    std::vector<std::byte> data(elems / fmt.block_elems * fmt.block_bytes * 3, std::byte{0x11});
    w.add_tensor("q.weight", type, {elems, 3}, data);
    Bytes b = w.build();
    const auto f = GgufFile::open(dir_.write("ok.gguf", b));
    const GgufTensor* t = f->find_tensor("q.weight");
    ASSERT_NE(t, nullptr) << fmt.name;
    EXPECT_EQ(t->nbytes, data.size()) << fmt.name;
    auto m = test::marks(w);
    b.resize(m["end:q.weight"] - 1);
    expect_error(b, m["q.weight.offset"], "q.weight.offset", "past the end of the file");
  }
}

TEST_F(GgufMalformed, TensorOffsetHuge) {
  GgufWriter w = base_writer();
  Bytes b = w.build();
  auto m = test::marks(w);
  put<uint64_t>(b, m["a.weight.offset"], std::numeric_limits<uint64_t>::max() - 31);
  expect_error(b, m["a.weight.offset"], "a.weight.offset", "past the end of the file");
}

TEST_F(GgufMalformed, BadAlignment) {
  GgufWriter w = base_writer();
  w.add_u32("general.alignment", 32);  // the writer refuses 24: patch it in
  Bytes b = w.build();
  auto m = test::marks(w);
  put<uint32_t>(b, m["kv:general.alignment.value"], 24);
  expect_error(b, m["kv:general.alignment"], "general.alignment", "not a power of two");
}

TEST_F(GgufMalformed, AlignmentOfWrongType) {
  GgufWriter w = base_writer();
  w.add_string("general.alignmenX", "32");  // the writer refuses a string alignment
  Bytes b = w.build();
  auto m = test::marks(w);
  test::rename_key(b, m["kv:general.alignmenX"], "general.alignment");
  expect_error(b, m["kv:general.alignmenX"], "general.alignment", "must be an integer");
}

TEST_F(GgufMalformed, MissingFile) {
  try {
    GgufFile::open((dir_.path() / "nope.gguf").string());
    ADD_FAILURE() << "opened a missing file";
  } catch (const GgufError& e) {
    EXPECT_EQ(e.field(), "file");
    EXPECT_NE(std::string(e.what()).find("No such file"), std::string::npos) << e.what();
  }
}

TEST_F(GgufMalformed, DirectoryIsNotAFile) {
  EXPECT_THROW(GgufFile::open(dir_.path().string()), GgufError);
}

// Every prefix of a valid file that cuts into the last tensor's data is an error (the zero
// padding after it is not data: a file without it is valid).
TEST_F(GgufMalformed, EveryTruncationIsAnError) {
  const GgufWriter w = base_writer();
  const Bytes full = w.build();
  const uint64_t data_end = test::marks(w)["end:b.weight"];
  ASSERT_LT(data_end, full.size());  // padded
  EXPECT_EQ(GgufFile::open(dir_.write("unpadded.gguf",
                                      Bytes(full.begin(),
                                            full.begin() + static_cast<std::ptrdiff_t>(data_end))))
                ->tensors()
                .size(),
            2u);
  for (size_t n = 0; n < data_end; ++n) {
    const Bytes b(full.begin(), full.begin() + static_cast<std::ptrdiff_t>(n));
    const std::string path = dir_.write("cut.gguf", b);
    EXPECT_THROW(GgufFile::open(path), GgufError) << "prefix of " << n << " bytes";
  }
}

// Random single-byte corruptions either parse or raise GgufError; anything else (a crash, another
// exception type, bad_alloc) fails. Meaningful mostly under ASan/UBSan.
TEST_F(GgufMalformed, RandomCorruptionNeverCrashes) {
  const Bytes full = base_writer().build();
  std::mt19937 rng(1234);
  const uint64_t header_end = GgufFile::open(dir_.write("ok.gguf", full))->data_offset();
  int errors = 0;
  for (int i = 0; i < 400; ++i) {
    Bytes b = full;
    const auto at = std::uniform_int_distribution<uint64_t>(0, header_end - 1)(rng);
    b[at] = static_cast<uint8_t>(std::uniform_int_distribution<int>(0, 255)(rng));
    try {
      GgufFile::open(dir_.write("fuzz.gguf", b));
    } catch (const GgufError&) {
      ++errors;
    }
  }
  EXPECT_GT(errors, 60);  // most bytes of the header matter
}

}  // namespace
}  // namespace plinth
