#pragma once
// The chat page's static files (host/server/web/), compiled into the server: cmake/embed_web.cmake
// turns each file into a byte array of a generated web_assets.cpp at build time (no CDN, no npm).

#include <string_view>

namespace plinth::server {

struct WebAsset {
  std::string_view path;          ///< the URL path: "/" for index.html, else "/" + file name
  std::string_view content_type;  ///< from the extension (html, js, css, svg)
  std::string_view body;          ///< the file's bytes; static storage
};

/// The asset served at `path`, or nullptr. Any thread.
const WebAsset* find_web_asset(std::string_view path);

}  // namespace plinth::server
