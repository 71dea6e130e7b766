// HTTP/1.1 request parsing as the server configures Boost.Beast (string body, 1 MiB body limit,
// 64 KiB header limit) over raw bytes, pipelined requests one after another; each complete POST to
// /v1/completions or /v1/chat/completions goes on to the body parser.
#include <boost/asio/buffer.hpp>
#include <boost/beast/http.hpp>
#include <optional>

#include "fuzz_targets.hpp"
#include "request_body.hpp"

namespace plinth::fuzz {

void fuzz_http_request(const uint8_t* data, size_t size) {
  namespace http = boost::beast::http;
  size_t pos = 0;
  while (pos < size) {
    http::request_parser<http::string_body> parser;
    parser.body_limit(1 << 20);  // ServerOptions::body_limit's default
    parser.header_limit(64 * 1024);
    parser.eager(true);
    boost::beast::error_code ec;
    while (!parser.is_done()) {
      const size_t used = parser.put(boost::asio::buffer(data + pos, size - pos), ec);
      pos += used;
      if (ec == http::error::need_more) {
        if (pos < size && used > 0) {
          ec = {};
          continue;
        }
        ec = {};
        parser.put_eof(ec);  // the connection ends here
        break;
      }
      if (ec) return;         // a 400 / 413 and the connection closes
      if (used == 0) return;  // no progress
    }
    if (ec || !parser.is_done()) return;
    const auto& req = parser.get();
    if (req.method() == http::verb::post) {
      if (req.target() == "/v1/completions") {
        parse_body_checked(server::ApiKind::kCompletion, req.body());
      } else if (req.target() == "/v1/chat/completions") {
        parse_body_checked(server::ApiKind::kChat, req.body());
      }
    }
    if (!req.keep_alive()) return;
  }
}

}  // namespace plinth::fuzz

PLINTH_FUZZ_ENTRY(plinth::fuzz::fuzz_http_request)
