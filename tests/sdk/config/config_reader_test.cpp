// plinth::sdk::ConfigReader (plinth/config.hpp): absent keys give the fallback, each type is read
// and a value of another JSON type is refused, integers never wrap (negative for unsigned, beyond
// the type's range), whole floats count as integers as the schema's "integer" does, enums, arrays
// and objects of arrays name their element, fail() for a plugin's own rules, and the error text
// "<plugin>: config.<key> ..., got <value as sent>" throughout.
#include <gtest/gtest.h>

#include <plinth/config.hpp>

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

namespace {

using plinth::sdk::ConfigReader;

template <class F>
std::string error_of(F&& f) {
  try {
    f();
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "(no error)";
}

TEST(ConfigReader, EmptyTextAndNullAreAnEmptyObject) {
  for (const ConfigReader& r :
       {ConfigReader("p", ""), ConfigReader("p", "  \n"),
        ConfigReader("p", static_cast<const char*>(nullptr)), ConfigReader("p", "{}")}) {
    EXPECT_FALSE(r.has("a"));
    EXPECT_EQ(r.get<uint32_t>("a", 7), 7u);
    EXPECT_TRUE(r.json().is_object());
  }
}

TEST(ConfigReader, RefusesTextThatIsNotAnObject) {
  EXPECT_NE(error_of([] { ConfigReader("p", "{"); }).find("p: config is not valid JSON: "),
            std::string::npos);
  EXPECT_EQ(error_of([] { ConfigReader("p", "[1]"); }), "p: config must be a JSON object, got [1]");
}

TEST(ConfigReader, ReadsEachTypeAndFallsBackWhenAbsent) {
  const ConfigReader r("p", R"({"b": true, "u": 42, "i": -3, "d": 0.25, "n": 2, "s": "x",
                                "big": 18446744073709551615})");
  EXPECT_TRUE(r.has("b"));
  EXPECT_TRUE(r.get<bool>("b", false));
  EXPECT_EQ(r.get<uint32_t>("u", 0), 42u);
  EXPECT_EQ(r.get<int>("i", 0), -3);
  EXPECT_EQ(r.get<int64_t>("i", 0), -3);
  EXPECT_EQ(r.get<double>("d", 0), 0.25);
  EXPECT_EQ(r.get<float>("d", 0), 0.25f);
  EXPECT_EQ(r.get<double>("n", 0), 2.0);  // an integer is a number
  EXPECT_EQ(r.get<std::string>("s", ""), "x");
  EXPECT_EQ(r.get<uint64_t>("big", 0), UINT64_MAX);
  EXPECT_EQ(r.get<std::string>("absent", "fallback"), "fallback");
  EXPECT_EQ(r.get<double>("absent", -1.5), -1.5);
  EXPECT_EQ(r.get<uint32_t>("u"), 42u);
  EXPECT_EQ(error_of([&] { r.get<uint32_t>("absent"); }), "p: config.absent must be given");
}

TEST(ConfigReader, RefusesAnotherJsonType) {
  const ConfigReader r("kv_paged", R"({"b": 1, "u": "16", "d": "0.5", "s": 3, "t": true})");
  EXPECT_EQ(error_of([&] { r.get<bool>("b", false); }),
            "kv_paged: config.b must be true or false, got 1");
  EXPECT_EQ(error_of([&] { r.get<uint32_t>("u", 0); }),
            "kv_paged: config.u must be an integer in 0..4294967295, got \"16\"");
  EXPECT_EQ(error_of([&] { r.get<uint32_t>("t", 0); }),
            "kv_paged: config.t must be an integer in 0..4294967295, got true");
  EXPECT_EQ(error_of([&] { r.get<double>("d", 0); }),
            "kv_paged: config.d must be a number, got \"0.5\"");
  EXPECT_EQ(error_of([&] { r.get<std::string>("s", ""); }),
            "kv_paged: config.s must be a string, got 3");
}

TEST(ConfigReader, IntegersNeverWrap) {
  const ConfigReader r("kv_paged", R"({"neg": -1, "two40": 1099511627776, "u64max":
      18446744073709551615, "i32min": -2147483648, "frac": 2.5, "huge": 1e300})");
  EXPECT_EQ(error_of([&] { r.get<uint32_t>("neg", 0); }),
            "kv_paged: config.neg must be an integer in 0..4294967295, got -1");
  EXPECT_EQ(error_of([&] { r.get<uint64_t>("neg", 0); }),
            "kv_paged: config.neg must be an integer in 0..18446744073709551615, got -1");
  EXPECT_EQ(error_of([&] { r.get<uint32_t>("two40", 0); }),
            "kv_paged: config.two40 must be an integer in 0..4294967295, got 1099511627776");
  EXPECT_EQ(r.get<uint64_t>("two40", 0), uint64_t{1} << 40);
  EXPECT_EQ(error_of([&] { r.get<int64_t>("u64max", 0); }),
            "kv_paged: config.u64max must be an integer in "
            "-9223372036854775808..9223372036854775807, got 18446744073709551615");
  EXPECT_EQ(error_of([&] { r.get<uint8_t>("two40", 0); }),
            "kv_paged: config.two40 must be an integer in 0..255, got 1099511627776");
  EXPECT_EQ(r.get<int32_t>("i32min", 0), INT32_MIN);
  EXPECT_EQ(error_of([&] { r.get<int16_t>("i32min", 0); }),
            "kv_paged: config.i32min must be an integer in -32768..32767, got -2147483648");
  EXPECT_EQ(error_of([&] { r.get<uint32_t>("frac", 0); }),
            "kv_paged: config.frac must be an integer in 0..4294967295, got 2.5");
  EXPECT_EQ(error_of([&] { r.get<uint64_t>("huge", 0); }),
            "kv_paged: config.huge must be an integer in 0..18446744073709551615, got 1e+300");
  EXPECT_EQ(error_of([&] { r.get<float>("huge", 0); }),
            "kv_paged: config.huge must be a number that fits a float, got 1e+300");
  EXPECT_EQ(r.get<double>("huge", 0), 1e300);
}

TEST(ConfigReader, WholeFloatsAreIntegersAsTheSchemaSays) {
  const ConfigReader r("p", R"({"a": 64.0, "b": 1e3, "c": -2.0, "d": 4294967296.0,
                                "e": 1.8446744073709552e19})");
  EXPECT_EQ(r.get<uint32_t>("a", 0), 64u);
  EXPECT_EQ(r.get<uint32_t>("b", 0), 1000u);
  EXPECT_EQ(r.get<int>("c", 0), -2);
  EXPECT_NE(error_of([&] { r.get<uint32_t>("c", 0); }).find("got -2.0"), std::string::npos);
  EXPECT_NE(error_of([&] { r.get<uint32_t>("d", 0); }).find("got 4294967296.0"), std::string::npos);
  EXPECT_EQ(r.get<uint64_t>("d", 0), uint64_t{1} << 32);
  // 2^64 is past uint64_t: refused, not wrapped to 0.
  EXPECT_NE(error_of([&] { r.get<uint64_t>("e", 0); }).find("config.e must be an integer"),
            std::string::npos);
}

enum class Mode { kA, kB };

TEST(ConfigReader, EnumsMapNamesAndRefuseOthers) {
  const ConfigReader r("sched", R"({"m": "b", "x": "c", "n": 1})");
  const auto names = {std::pair<std::string_view, Mode>{"a", Mode::kA}, {"b", Mode::kB}};
  EXPECT_EQ(r.get_enum<Mode>("m", names, Mode::kA), Mode::kB);
  EXPECT_EQ(r.get_enum<Mode>("absent", names, Mode::kB), Mode::kB);
  EXPECT_EQ(error_of([&] { r.get_enum<Mode>("x", names, Mode::kA); }),
            "sched: config.x must be one of \"a\", \"b\", got \"c\"");
  EXPECT_EQ(error_of([&] { r.get_enum<Mode>("n", names, Mode::kA); }),
            "sched: config.n must be one of \"a\", \"b\", got 1");
}

TEST(ConfigReader, ArraysAndObjectsNameTheirElements) {
  const ConfigReader r("g", R"({"sizes": [1, 8.0, 3], "bad": [1, -2], "no": 4,
      "rows": [{"n": 1}, {"n": "2"}], "mixed": [{"n": 1}, 5]})");
  EXPECT_EQ(r.get_array<uint32_t>("sizes"), (std::vector<uint32_t>{1, 8, 3}));
  EXPECT_TRUE(r.get_array<uint32_t>("absent").empty());
  EXPECT_EQ(error_of([&] { r.get_array<uint32_t>("bad"); }),
            "g: config.bad[1] must be an integer in 0..4294967295, got -2");
  EXPECT_EQ(error_of([&] { r.get_array<uint32_t>("no"); }), "g: config.no must be an array, got 4");
  const std::vector<ConfigReader> rows = r.get_objects("rows");
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0].get<uint32_t>("n"), 1u);
  EXPECT_EQ(error_of([&] { rows[1].get<uint32_t>("n"); }),
            "g: config.rows[1].n must be an integer in 0..4294967295, got \"2\"");
  EXPECT_EQ(error_of([&] { rows[1].get<uint32_t>("m"); }), "g: config.rows[1].m must be given");
  EXPECT_EQ(error_of([&] { rows[0].fail("n", "is odd"); }), "g: config.rows[0].n is odd");
  EXPECT_EQ(error_of([&] { r.get_objects("mixed"); }),
            "g: config.mixed[1] must be an object, got 5");
  EXPECT_TRUE(r.get_objects("absent").empty());
}

TEST(ConfigReader, FailNamesThePluginAndTheKey) {
  const ConfigReader r("spec_decode", R"({"min_n": 5, "max_n": 3})");
  EXPECT_EQ(error_of([&] { r.fail("min_n", "= 5 must not exceed config.max_n = 3"); }),
            "spec_decode: config.min_n = 5 must not exceed config.max_n = 3");
}

}  // namespace
