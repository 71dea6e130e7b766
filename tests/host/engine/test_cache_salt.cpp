// cache_salt_digest: the fixed-size namespace key the engine keeps instead of a request's
// cache_salt. Expected digests are Python's hashlib.sha256 of the same bytes (an independent
// SHA-256), so a wrong algorithm or a truncated input fails here.
#include <gtest/gtest.h>

#include <string>

#include "engine/cache_salt.hpp"

namespace plinth {
namespace {

std::string hex(const std::string& bytes) {
  static const char* const kDigits = "0123456789abcdef";
  std::string out;
  for (unsigned char c : bytes) {
    out += kDigits[c >> 4];
    out += kDigits[c & 15];
  }
  return out;
}

TEST(CacheSalt, EmptyStaysTheSharedNamespace) {
  EXPECT_EQ(cache_salt_digest(""), "");
}

TEST(CacheSalt, IsTheSha256OfTheSalt) {
  EXPECT_EQ(hex(cache_salt_digest("abc")),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  EXPECT_EQ(hex(cache_salt_digest("tenant-a")),
            "80a707af7dc77ee1228f9127180f3964835e5beb4c4ab0d812f0fe7593579b3a");
}

TEST(CacheSalt, AnyLengthGivesTheSameFixedSize) {
  const std::string mib(1 << 20, 'x');
  const std::string d = cache_salt_digest(mib);
  EXPECT_EQ(d.size(), kCacheSaltDigestSize);
  EXPECT_EQ(hex(d), "8f990ba0b577b51cf009ea049368c16bbda1b21e1b93be07a824758bb253c39b");
  EXPECT_EQ(cache_salt_digest(std::string(1, '\0')).size(), kCacheSaltDigestSize);
  // Salts that differ in their last byte only stay apart.
  std::string other = mib;
  other.back() = 'y';
  EXPECT_NE(cache_salt_digest(other), d);
}

}  // namespace
}  // namespace plinth
