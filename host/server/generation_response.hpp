#pragma once
// GenerationResponse: what the HTTP session needs of one API's answer to a generation request,
// so that every generation endpoint runs on the same path (submit, per-choice engine events,
// abort on disconnect, the stream's deferred 200 head) and differs only in the bytes it writes:
//   ResponseBuilder    POST /v1/completions, POST /v1/chat/completions (OpenAI)
//   MessagesResponse   POST /v1/messages (Anthropic; anthropic_api.hpp)
//   ResponsesResponse  POST /v1/responses (OpenAI Responses; responses_api.hpp)
// Used on the connection's strand only.

#include <cstddef>
#include <string>

namespace plinth::server {

struct StreamEvent;

class GenerationResponse {
 public:
  virtual ~GenerationResponse() = default;
  /// Records an event of engine request `index`. Streaming: returns the bytes of the SSE body to
  /// send now (may be empty; the first call's bytes follow the 200 head). Not streaming: "".
  virtual std::string on_event(size_t index, const StreamEvent& event) = 0;
  virtual bool stream() const = 0;
  /// Every engine request finished.
  virtual bool done() const = 0;
  /// Some request failed inside the engine: its message ("" when none failed).
  virtual const std::string& error() const = 0;
  /// The HTTP status of error(): 400 when the engine refused the request, else 500.
  virtual int error_status() const = 0;
  /// The request field error() names, "" when none.
  virtual const std::string& error_param() const = 0;
  /// The non-streamed JSON body (once done() and error() is "").
  virtual std::string body() const = 0;
  /// The stream's closing bytes (once done()).
  virtual std::string stream_end() const = 0;
};

}  // namespace plinth::server
