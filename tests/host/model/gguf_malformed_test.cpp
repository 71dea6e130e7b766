// Malformed GGUF files: each is a GgufError naming the byte offset and the field, never a crash
// or an allocation sized by a bogus count.
#include <gtest/gtest.h>

#include <limits>
#include <random>

#include "gguf_writer.hpp"
#include "model/gguf.hpp"

namespace plinth {
namespace {

using test::Bytes;
using test::GgufWriter;
using test::put;

// A small valid file: three kv pairs (string, array, u32) and two tensors, the last one ending
// exactly at the end of the file.
GgufWriter base_writer() {
  GgufWriter w;
  w.add_string("general.architecture", "llama");
  w.add("tok", GgufValueType::ARRAY, test::enc_string_array({"a", "bc", "def"}));
  w.add_u32("general.quantization_version", 2);
  w.add_tensor("a.weight", {4, 2}, GgmlType::F32);
  w.add_tensor("b.weight", {32, 2}, GgmlType::Q8_0);
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
  GgufWriter w = base_writer();
  w.version = 1;
  expect_error(w.build(), 4, "version", "unsupported GGUF version 1");
  w.version = 4;
  expect_error(w.build(), 4, "version", "supported: 2, 3");
}

TEST_F(GgufMalformed, BigEndianFile) {
  GgufWriter w = base_writer();
  w.version = 0x03000000;  // what a big-endian v3 file reads as
  expect_error(w.build(), 4, "version", "big-endian");
}

TEST_F(GgufMalformed, TruncatedHeader) {
  Bytes b = base_writer().build();
  b.resize(12);
  expect_error(b, 8, "tensor_count", "truncated");
}

TEST_F(GgufMalformed, KvCountPastEnd) {
  GgufWriter w = base_writer();
  Bytes b = w.build();
  put<uint64_t>(b, w.marks["kv_count"], uint64_t{1} << 60);
  expect_error(b, 16, "metadata_kv_count", "cannot fit");
}

TEST_F(GgufMalformed, TensorCountPastEnd) {
  GgufWriter w = base_writer();
  Bytes b = w.build();
  put<uint64_t>(b, w.marks["tensor_count"], std::numeric_limits<uint64_t>::max());
  expect_error(b, 8, "tensor_count", "cannot fit");
}

TEST_F(GgufMalformed, KeyLengthPastEnd) {
  GgufWriter w = base_writer();
  Bytes b = w.build();
  const uint64_t at = w.marks["kv:general.quantization_version"];
  put<uint64_t>(b, at, uint64_t{1} << 62);
  expect_error(b, at, "metadata[2].key", "points past the end");
}

TEST_F(GgufMalformed, StringValueLengthPastEnd) {
  GgufWriter w = base_writer();
  Bytes b = w.build();
  const uint64_t at = w.marks["kv:general.architecture.value"];
  put<uint64_t>(b, at, b.size());
  expect_error(b, at, "general.architecture", "string length");
}

TEST_F(GgufMalformed, ArrayCountPastEnd) {
  GgufWriter w = base_writer();
  Bytes b = w.build();
  const uint64_t at = w.marks["kv:tok.value"] + 4;
  put<uint64_t>(b, at, uint64_t{1} << 58);
  expect_error(b, at, "tok.count", "points past the end");
}

TEST_F(GgufMalformed, ArrayElementStringPastEnd) {
  GgufWriter w = base_writer();
  Bytes b = w.build();
  const uint64_t at = w.marks["kv:tok.value"] + 12 + 9;  // second element, after "a"
  put<uint64_t>(b, at, uint64_t{1} << 40);
  expect_error(b, at, "tok[1]", "string length");
}

TEST_F(GgufMalformed, UnknownValueType) {
  GgufWriter w = base_writer();
  Bytes b = w.build();
  const uint64_t at = w.marks["kv:general.quantization_version.type"];
  put<uint32_t>(b, at, 13);
  expect_error(b, at, "general.quantization_version.type", "unknown value type 13");
}

TEST_F(GgufMalformed, UnknownArrayElementType) {
  GgufWriter w = base_writer();
  Bytes b = w.build();
  const uint64_t at = w.marks["kv:tok.value"];
  put<uint32_t>(b, at, 77);
  expect_error(b, at, "tok.element_type", "unknown value type 77");
}

TEST_F(GgufMalformed, BoolNeitherZeroNorOne) {
  GgufWriter w = base_writer();
  w.add("flag", GgufValueType::BOOL, test::enc<uint8_t>(2));
  Bytes b = w.build();
  expect_error(b, w.marks["kv:flag.value"], "flag", "bool value 2");
}

TEST_F(GgufMalformed, ArraysNestedTooDeep) {
  GgufWriter w = base_writer();
  Bytes v = test::enc_array_of<int32_t>(GgufValueType::INT32, {1});
  for (int i = 0; i < 9; ++i) v = test::enc_array(GgufValueType::ARRAY, 1, v);
  w.add("deep", GgufValueType::ARRAY, v);
  Bytes b = w.build();
  // Depth 0 is the value itself; the 9th nested array header (8 levels of 12 bytes in) fails.
  expect_error(b, w.marks["kv:deep.value"] + uint64_t{8 * 12}, "deep[0][0]",
               "nested deeper than 8");
}

TEST_F(GgufMalformed, EmptyKey) {
  GgufWriter w;
  w.add_u32("", 1);
  expect_error(w.build(), 24, "metadata[0].key", "empty key");
}

TEST_F(GgufMalformed, DuplicateKey) {
  GgufWriter w = base_writer();
  w.add_u32("general.quantization_version", 3);
  Bytes b = w.build();
  expect_error(b, w.marks["kv:general.quantization_version#2"], "general.quantization_version",
               "duplicate metadata key");
}

TEST_F(GgufMalformed, DuplicateTensorName) {
  GgufWriter w = base_writer();
  w.add_tensor("a.weight", {4}, GgmlType::F32);
  Bytes b = w.build();
  expect_error(b, w.marks["tensor:a.weight#2"], "tensor[2].name", "duplicate tensor name");
}

TEST_F(GgufMalformed, TooManyDims) {
  GgufWriter w = base_writer();
  Bytes b = w.build();
  put<uint32_t>(b, w.marks["a.weight.n_dims"], 5);
  expect_error(b, w.marks["a.weight.n_dims"], "a.weight.n_dims", "n_dims 5 outside 1..4");
}

TEST_F(GgufMalformed, ZeroDims) {
  GgufWriter w = base_writer();
  Bytes b = w.build();
  put<uint32_t>(b, w.marks["b.weight.n_dims"], 0);
  expect_error(b, w.marks["b.weight.n_dims"], "b.weight.n_dims", "n_dims 0");
}

TEST_F(GgufMalformed, DimensionZero) {
  GgufWriter w = base_writer();
  Bytes b = w.build();
  put<uint64_t>(b, w.marks["a.weight.dims"] + 8, 0);
  expect_error(b, w.marks["a.weight.dims"] + 8, "a.weight.dims[1]", "dimension is 0");
}

TEST_F(GgufMalformed, ElementCountOverflow) {
  GgufWriter w = base_writer();
  Bytes b = w.build();
  put<uint64_t>(b, w.marks["a.weight.dims"], uint64_t{1} << 40);
  put<uint64_t>(b, w.marks["a.weight.dims"] + 8, uint64_t{1} << 40);
  expect_error(b, w.marks["a.weight.dims"] + 8, "a.weight.dims[1]", "overflows");
}

TEST_F(GgufMalformed, UnknownTensorType) {
  GgufWriter w = base_writer();
  Bytes b = w.build();
  put<uint32_t>(b, w.marks["a.weight.type"], 99);
  expect_error(b, w.marks["a.weight.type"], "a.weight.type",
               "tensor type 99 (unknown to ggml) is not supported; supported: F32, F16, BF16, "
               "Q4_0, Q4_1, Q8_0");
}

TEST_F(GgufMalformed, UnsupportedKnownTensorType) {
  GgufWriter w = base_writer();
  Bytes b = w.build();
  put<uint32_t>(b, w.marks["b.weight.type"], 12);
  expect_error(b, w.marks["b.weight.type"], "b.weight.type", "tensor type 12 (Q4_K)");
}

TEST_F(GgufMalformed, RowNotMultipleOfBlock) {
  GgufWriter w = base_writer();
  Bytes b = w.build();
  put<uint64_t>(b, w.marks["b.weight.dims"], 16);
  expect_error(b, w.marks["b.weight.dims"], "b.weight.dims[0]", "Q8_0 block size 32");
}

TEST_F(GgufMalformed, MisalignedTensorOffset) {
  GgufWriter w = base_writer();
  Bytes b = w.build();
  put<uint64_t>(b, w.marks["b.weight.offset"], 40);
  expect_error(b, w.marks["b.weight.offset"], "b.weight.offset",
               "not a multiple of the alignment 32");
}

TEST_F(GgufMalformed, TensorDataPastEndOfFile) {
  GgufWriter w = base_writer();
  Bytes b = w.build();
  b.pop_back();
  expect_error(b, w.marks["b.weight.offset"], "b.weight.offset", "past the end of the file");
}

TEST_F(GgufMalformed, TensorOffsetHuge) {
  GgufWriter w = base_writer();
  Bytes b = w.build();
  put<uint64_t>(b, w.marks["a.weight.offset"], std::numeric_limits<uint64_t>::max() - 31);
  expect_error(b, w.marks["a.weight.offset"], "a.weight.offset", "past the end of the file");
}

TEST_F(GgufMalformed, BadAlignment) {
  GgufWriter w = base_writer();
  w.add_u32("general.alignment", 24);
  Bytes b = w.build();
  expect_error(b, w.marks["kv:general.alignment"], "general.alignment", "not a power of two");
}

TEST_F(GgufMalformed, AlignmentOfWrongType) {
  GgufWriter w = base_writer();
  w.add_string("general.alignment", "32");
  Bytes b = w.build();
  expect_error(b, w.marks["kv:general.alignment"], "general.alignment", "must be an integer");
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

// Every proper prefix of a valid file is an error (the last tensor ends at the end of the file).
TEST_F(GgufMalformed, EveryTruncationIsAnError) {
  const Bytes full = base_writer().build();
  for (size_t n = 0; n < full.size(); ++n) {
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
