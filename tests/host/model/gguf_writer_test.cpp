// GgufWriter (host/model/gguf_writer.hpp): files re-read by plinth's reader hold exactly what was
// added; the layout it reports is where the reader finds things; refusals name the key or tensor;
// write_file is atomic. Round trips of every value type and tensor type also run in
// gguf_reader_test.cpp.
#include <gtest/gtest.h>

#include <sys/stat.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <limits>

#include "gguf_test_files.hpp"
#include "model/gguf.hpp"
#include "model/gguf_writer.hpp"

namespace plinth {
namespace {

namespace fs = std::filesystem;
using test::Bytes;
using VT = GgufValueType;

// Structural equality of two values, types included.
bool same_value(const GgufValue& a, const GgufValue& b) {
  if (a.type != b.type) return false;
  if (a.type != VT::kArray) {
    if (a.data.index() != b.data.index()) return false;
    if (auto* u = std::get_if<uint64_t>(&a.data)) return *u == std::get<uint64_t>(b.data);
    if (auto* i = std::get_if<int64_t>(&a.data)) return *i == std::get<int64_t>(b.data);
    if (auto* d = std::get_if<double>(&a.data)) return *d == std::get<double>(b.data);
    if (auto* f = std::get_if<bool>(&a.data)) return *f == std::get<bool>(b.data);
    return std::get<std::string>(a.data) == std::get<std::string>(b.data);
  }
  if (a.elem_type != b.elem_type || a.items().size() != b.items().size()) return false;
  for (size_t i = 0; i < a.items().size(); ++i) {
    if (!same_value(a.items()[i], b.items()[i])) return false;
  }
  return true;
}

// One value of every type, arrays of each, nested arrays and an empty array.
std::vector<std::pair<std::string, GgufValue>> every_value() {
  std::vector<std::pair<std::string, GgufValue>> v = {
      {"u8", gguf_uint(VT::kUint8, 200)},
      {"i8", gguf_int(VT::kInt8, -100)},
      {"u16", gguf_uint(VT::kUint16, 60000)},
      {"i16", gguf_int(VT::kInt16, -30000)},
      {"u32", gguf_uint(VT::kUint32, 4000000000u)},
      {"i32", gguf_int(VT::kInt32, std::numeric_limits<int32_t>::min())},
      {"u64", gguf_uint(VT::kUint64, std::numeric_limits<uint64_t>::max())},
      {"i64", gguf_int(VT::kInt64, std::numeric_limits<int64_t>::min())},
      {"f32", gguf_float(VT::kFloat32, 1e-5)},
      {"f64", gguf_float(VT::kFloat64, -1.0e300)},
      {"bool", gguf_bool(true)},
      {"str", gguf_string(std::string("h\xc3\xa9llo\0world", 12))},
      {"empty_str", gguf_string("")},
      {"a_str", gguf_string_array({"<|im_start|>", "", "\xc4\xa0the"})},
      {"a_empty", gguf_array(VT::kFloat32, {})},
      {"a_nested", gguf_array(VT::kArray, {gguf_array(VT::kInt16, {gguf_int(VT::kInt16, -2)}),
                                           gguf_string_array({"x", "y"})})},
  };
  // An array of each scalar type, holding that type's value above.
  const size_t scalars = 11;
  for (size_t i = 0; i < scalars; ++i) {
    const GgufValue& x = v[i].second;
    v.push_back({"a_" + v[i].first, gguf_array(x.type, {x, x})});
  }
  return v;
}

class GgufWriterTest : public ::testing::Test {
 protected:
  test::TempDir dir_;
};

TEST_F(GgufWriterTest, EveryValueTypeRoundTripsInOrder) {
  GgufWriter w;
  const auto values = every_value();
  for (const auto& [k, v] : values) w.add(k, v);
  const auto f = GgufFile::open(dir_.write("v.gguf", w.build()));
  EXPECT_EQ(f->version(), 3u);
  ASSERT_EQ(f->keys().size(), values.size());
  for (size_t i = 0; i < values.size(); ++i) {
    EXPECT_EQ(f->keys()[i], values[i].first);
    const GgufValue* got = f->find_value(values[i].first);
    ASSERT_NE(got, nullptr) << values[i].first;
    EXPECT_TRUE(same_value(*got, values[i].second)) << values[i].first;
  }
  EXPECT_EQ(static_cast<float>(f->get_float("f32")), 1e-5f);  // rounded to float when written
}

// Values read back and written again give the same bytes: nothing is lost or re-encoded.
TEST_F(GgufWriterTest, RewritingAParsedFileGivesTheSameBytes) {
  GgufWriter w;
  for (const auto& [k, v] : every_value()) w.add(k, v);
  w.add_u32("general.alignment", 64);
  test::add_pattern_tensor(w, "t0", {64, 2}, GgmlType::kQ4_1);
  test::add_pattern_tensor(w, "t1", {3}, GgmlType::kF32);
  const Bytes first = w.build();
  const auto f = GgufFile::open(dir_.write("a.gguf", first));
  GgufWriter again;
  for (const std::string& k : f->keys()) again.add(k, *f->find_value(k));
  for (const GgufTensor& t : f->tensors()) {
    again.add_tensor(t.name, t.type, t.dims, std::span<const std::byte>(t.data, t.nbytes));
  }
  EXPECT_EQ(again.build(), first);
}

TEST_F(GgufWriterTest, TensorsOfSeveralTypesLandWhereTheLayoutSays) {
  GgufWriter w;
  w.add_string("general.architecture", "llama");
  const std::vector<std::pair<GgmlType, std::vector<uint64_t>>> kinds = {
      {GgmlType::kF32, {3, 5}},   {GgmlType::kF16, {7}},      {GgmlType::kBF16, {2, 3, 4, 5}},
      {GgmlType::kQ4_0, {64, 3}}, {GgmlType::kQ4_1, {32, 2}}, {GgmlType::kQ8_0, {96}},
  };
  for (size_t i = 0; i < kinds.size(); ++i) {
    test::add_pattern_tensor(w, "t" + std::to_string(i), kinds[i].second, kinds[i].first);
  }
  const GgufLayout l = w.layout();
  const Bytes b = w.build();
  EXPECT_EQ(b.size(), l.file_size);
  EXPECT_EQ(l.file_size % 32, 0u);  // the last tensor is padded too, as ggml writes it
  const auto f = GgufFile::open(dir_.write("t.gguf", b));
  EXPECT_EQ(f->data_offset(), l.data_offset);
  EXPECT_EQ(f->offset_of("general.architecture"), l.kvs[0].begin);
  ASSERT_EQ(f->tensors().size(), kinds.size());
  for (size_t i = 0; i < kinds.size(); ++i) {
    const GgufTensor& t = f->tensors()[i];
    EXPECT_EQ(t.name, l.tensors[i].name);
    EXPECT_EQ(t.type, kinds[i].first);
    EXPECT_EQ(t.dims, kinds[i].second);
    EXPECT_EQ(t.offset, l.tensors[i].data);
    EXPECT_EQ(t.nbytes, l.tensors[i].nbytes);
    EXPECT_EQ(t.offset % 32, 0u);
    for (uint64_t j = 0; j < t.nbytes; ++j) {
      ASSERT_EQ(static_cast<uint8_t>(t.data[j]), test::pattern_byte(i, j)) << t.name << " " << j;
    }
    // The padding after each tensor's data is zeros.
    const uint64_t end = i + 1 < kinds.size() ? l.tensors[i + 1].data : l.file_size;
    for (uint64_t j = t.offset + t.nbytes; j < end; ++j) ASSERT_EQ(b[j], 0) << t.name;
  }
  for (uint64_t j = l.tensors.back().offset + 8; j < l.data_offset; ++j) ASSERT_EQ(b[j], 0);
}

TEST_F(GgufWriterTest, AlignmentFollowsGeneralAlignment) {
  for (uint32_t a : {1u, 8u, 64u, 4096u}) {
    GgufWriter w;
    test::add_pattern_tensor(w, "a", {3}, GgmlType::kF32);
    w.add("general.alignment", gguf_uint(VT::kUint32, a));  // after a tensor: applies to it too
    test::add_pattern_tensor(w, "b", {5}, GgmlType::kF16);
    const auto f = GgufFile::open(dir_.write("a.gguf", w.build()));
    EXPECT_EQ(w.alignment(), a);
    EXPECT_EQ(f->alignment(), a);
    EXPECT_EQ(f->data_offset() % a, 0u);
    EXPECT_EQ(f->find_tensor("b")->offset - f->data_offset(), (12 + a - 1) / a * a) << a;
    EXPECT_EQ(f->size() % a, 0u);
  }
  GgufWriter w;
  EXPECT_EQ(w.alignment(), 32u);
  EXPECT_THROW(w.add_u32("general.alignment", 24), std::invalid_argument);
  EXPECT_THROW(w.add_u32("general.alignment", 0), std::invalid_argument);
  EXPECT_THROW(w.add_string("general.alignment", "32"), std::invalid_argument);
  EXPECT_EQ(w.alignment(), 32u);
  w.add_u32("general.alignment", 16);
  w.set("general.alignment", gguf_uint(VT::kUint64, 128));
  EXPECT_EQ(w.alignment(), 128u);
}

TEST_F(GgufWriterTest, SetReplacesInPlaceOrAppends) {
  GgufWriter w;
  w.add_u32("a", 1);
  w.add_u32("b", 2);
  w.set("a", gguf_string("one"));
  w.set("c", gguf_bool(false));
  EXPECT_TRUE(w.has("c"));
  EXPECT_FALSE(w.has("d"));
  const auto f = GgufFile::open(dir_.write("s.gguf", w.build()));
  EXPECT_EQ(f->keys(), (std::vector<std::string>{"a", "b", "c"}));
  EXPECT_EQ(f->get_string("a"), "one");
  EXPECT_FALSE(f->get_bool("c"));
}

// Each refusal is std::invalid_argument whose message names the key or tensor.
TEST_F(GgufWriterTest, RefusesInvalidInputNamingIt) {
  auto refuses = [](const std::function<void()>& f, const std::string& what) {
    try {
      f();
      ADD_FAILURE() << "accepted; expected an error with '" << what << "'";
    } catch (const std::invalid_argument& e) {
      EXPECT_NE(std::string(e.what()).find(what), std::string::npos) << e.what();
    }
  };
  GgufWriter w;
  w.add_u32("k", 1);
  test::add_pattern_tensor(w, "t", {4}, GgmlType::kF32);
  refuses([&] { w.add_u32("k", 2); }, "duplicate metadata key 'k'");
  refuses([&] { w.add_u32("", 2); }, "empty metadata key");
  refuses([] { gguf_uint(VT::kUint8, 256); }, "does not fit uint8");
  refuses([] { gguf_int(VT::kInt16, 40000); }, "does not fit int16");
  refuses([] { gguf_uint(VT::kInt32, 1); }, "not an unsigned");
  refuses([] { gguf_float(VT::kUint32, 1); }, "not float32");
  refuses([] { gguf_array(VT::kUint32, {gguf_string("x")}); }, "element of type string");
  GgufValue bad{VT::kUint32, VT::kUint8, std::string("x")};  // data does not match the type
  refuses([&] { w.add("bad", bad); }, "bad");
  GgufValue bad_elem{VT::kArray, VT::kString, std::vector<GgufValue>{gguf_bool(true)}};
  refuses([&] { w.add("arr", bad_elem); }, "arr[0]");
  const std::vector<std::byte> four(16);
  refuses([&] { w.add_tensor("t", GgmlType::kF32, {4}, four); }, "tensor 't': duplicate");
  refuses([&] { w.add_tensor("", GgmlType::kF32, {4}, four); }, "empty tensor name");
  refuses([&] { w.add_tensor("u", GgmlType::kF32, {}, four); }, "outside 1..4");
  refuses([&] { w.add_tensor("u", GgmlType::kF32, {1, 1, 1, 1, 4}, four); }, "outside 1..4");
  refuses([&] { w.add_tensor("u", GgmlType::kF32, {4, 0}, four); }, "dimension is 0");
  refuses([&] { w.add_tensor("u", GgmlType::kF32, {5}, four); }, "expected 20");
  refuses([&] { w.add_tensor("u", GgmlType::kQ8_0, {16}, four); }, "block size 32");
  refuses([&] { w.add_tensor("u", static_cast<GgmlType>(16), {256}, four); }, "not supported");
  // Nothing refused was added.
  EXPECT_EQ(w.num_kvs(), 1u);
  EXPECT_EQ(w.num_tensors(), 1u);
  EXPECT_NO_THROW(GgufFile::open(dir_.write("ok.gguf", w.build())));
}

// Owned tensor data stays valid in copies of the writer.
TEST_F(GgufWriterTest, CopiesShareOwnedData) {
  GgufWriter copy;
  {
    GgufWriter w;
    w.add_tensor("t", GgmlType::kF32, {2}, std::vector<std::byte>(8, std::byte{0x5a}));
    copy = w;
  }
  const auto f = GgufFile::open(dir_.write("c.gguf", copy.build()));
  EXPECT_EQ(static_cast<uint8_t>(f->find_tensor("t")->data[7]), 0x5a);
}

TEST_F(GgufWriterTest, StreamedChunksAreTheFile) {
  GgufWriter w;
  w.add_string("s", std::string(3000000, 'x'));  // more than one internal chunk
  w.add_tensor("big", GgmlType::kF32, {1 << 19}, std::vector<std::byte>(size_t{1} << 21));
  Bytes streamed;
  size_t calls = 0;
  w.write([&](const std::byte* p, size_t n) {
    EXPECT_GT(n, 0u);
    ++calls;
    streamed.insert(streamed.end(), reinterpret_cast<const uint8_t*>(p),
                    reinterpret_cast<const uint8_t*>(p) + n);
  });
  EXPECT_GT(calls, 2u);
  EXPECT_EQ(streamed, w.build());
  EXPECT_EQ(streamed.size(), w.layout().file_size);
}

bool only_file_in(const fs::path& dir, const std::string& name) {
  size_t n = 0;
  for (const auto& e : fs::directory_iterator(dir)) {
    ++n;
    if (e.path().filename() != name) return false;
  }
  return n == 1;
}

TEST_F(GgufWriterTest, WriteFileIsAtomic) {
  GgufWriter w;
  w.add_u32("x", 7);
  const fs::path out = dir_.path() / "out.gguf";
  std::string checked;
  w.write_file(out.string(), [&](const std::string& tmp) {
    checked = tmp;
    EXPECT_FALSE(fs::exists(out));  // not there before the check passed
    EXPECT_EQ(GgufFile::open(tmp)->get_uint("x"), 7u);
  });
  EXPECT_NE(checked.find("out.gguf.tmp."), std::string::npos) << checked;
  EXPECT_EQ(GgufFile::open(out.string())->get_uint("x"), 7u);
  EXPECT_TRUE(only_file_in(dir_.path(), "out.gguf"));
  struct stat st {};
  ASSERT_EQ(::stat(out.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0644u);

  // A failing check leaves the old file as it was and no temporary file.
  GgufWriter other;
  other.add_u32("x", 8);
  EXPECT_THROW(
      other.write_file(out.string(), [](const std::string&) { throw std::runtime_error("no"); }),
      std::runtime_error);
  EXPECT_EQ(GgufFile::open(out.string())->get_uint("x"), 7u);
  EXPECT_TRUE(only_file_in(dir_.path(), "out.gguf"));

  // Overwriting without a check.
  other.write_file(out.string());
  EXPECT_EQ(GgufFile::open(out.string())->get_uint("x"), 8u);
  EXPECT_TRUE(only_file_in(dir_.path(), "out.gguf"));
}

TEST_F(GgufWriterTest, WriteFileErrorsNameThePathAndReason) {
  GgufWriter w;
  w.add_u32("x", 1);
  auto message = [&](const std::string& path) {
    try {
      w.write_file(path);
    } catch (const std::runtime_error& e) {
      return std::string(e.what());
    }
    return std::string("(no error)");
  };
  const std::string missing = (dir_.path() / "no/such/dir/out.gguf").string();
  std::string m = message(missing);
  EXPECT_NE(m.find(missing), std::string::npos) << m;
  EXPECT_NE(m.find("No such file or directory"), std::string::npos) << m;
  m = message(dir_.path().string());
  EXPECT_NE(m.find(dir_.path().string() + " is a directory, not a regular file"), std::string::npos)
      << m;
  // Never renamed over something that is not a regular file: a FIFO, or a link to it, stays.
  const fs::path fifo = dir_.path() / "fifo.gguf";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0644), 0);
  fs::create_symlink(fifo, dir_.path() / "link.gguf");
  m = message(fifo.string());
  EXPECT_NE(m.find(fifo.string() + " is a FIFO (named pipe), not a regular file"),
            std::string::npos)
      << m;
  m = message((dir_.path() / "link.gguf").string());
  EXPECT_NE(m.find("link.gguf is a symbolic link to a FIFO (named pipe)"), std::string::npos) << m;
  EXPECT_TRUE(fs::is_fifo(fifo));
  EXPECT_TRUE(fs::is_symlink(dir_.path() / "link.gguf"));
  for (const auto& e : fs::directory_iterator(dir_.path())) {
    EXPECT_EQ(e.path().filename().string().find(".tmp."), std::string::npos) << e.path();
  }
  // A directory we cannot create files in: a read-only one, or /sys where even root cannot.
  const fs::path ro = dir_.path() / "ro";
  fs::create_directory(ro);
  fs::permissions(ro, fs::perms::owner_read | fs::perms::owner_exec);
  const fs::path unwritable = ::geteuid() != 0 ? ro : fs::path("/sys");
  const std::string target = (unwritable / "out.gguf").string();
  m = message(target);
  EXPECT_NE(m.find("cannot create a temporary file next to " + target), std::string::npos) << m;
  EXPECT_FALSE(fs::exists(target));
  fs::permissions(ro, fs::perms::owner_all);
}

}  // namespace
}  // namespace plinth
