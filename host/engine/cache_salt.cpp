#include "engine/cache_salt.hpp"

#include <openssl/evp.h>

#include <stdexcept>

namespace plinth {

std::string cache_salt_digest(std::string_view salt) {
  if (salt.empty()) return {};
  std::string out(kCacheSaltDigestSize, '\0');
  unsigned int size = 0;
  if (EVP_Digest(salt.data(), salt.size(), reinterpret_cast<unsigned char*>(out.data()), &size,
                 EVP_sha256(), nullptr) != 1 ||
      size != kCacheSaltDigestSize) {
    throw std::runtime_error("cache_salt: SHA-256 of the salt failed (OpenSSL EVP_Digest)");
  }
  return out;
}

}  // namespace plinth
