#pragma once
// A request's prefix-cache namespace as the engine keeps it: a fixed-size digest of its
// cache_salt, so that what a request leaves in the prefix cache (a namespace root that lives as
// long as any block of it stays cached) does not grow with the salt the client sent. vLLM folds
// the salt into its block hashes the same way.

#include <cstddef>
#include <string>
#include <string_view>

namespace plinth {

/// Bytes of a non-empty salt's digest.
inline constexpr size_t kCacheSaltDigestSize = 32;

/// The namespace key of `salt`: "" for the empty salt (the shared namespace, which a 1.0 prefix
/// cache can serve), else its SHA-256 (kCacheSaltDigestSize raw bytes, any values). Equal salts
/// give equal keys; different salts give different keys (up to SHA-256 collisions). Pure;
/// thread-safe. Throws std::runtime_error only when the crypto library fails (out of memory).
std::string cache_salt_digest(std::string_view salt);

}  // namespace plinth
