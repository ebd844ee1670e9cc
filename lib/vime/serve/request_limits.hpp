// How `vime serve` takes HTTP requests before any route runs, and bounds what one request may make
// it do: the body's size (--max-request-bytes: 413 above it, read from Content-Length and never
// buffered; a chunked body, of unknown size, 411), the API key, and every error answered in
// vLLM's error shape (a vime::Error from a route: 400, or 503 while stopping; anything else: 500).
// Torch-free, so tests/fuzz/fuzz_http_framing.cpp runs this framing under ASan+UBSan. A text
// prompt's bytes are checked against the context by request_body.hpp's check_prompt_bytes.
#pragma once

#include <atomic>

namespace httplib {
class Server;
}  // namespace httplib

namespace vime::serve {

struct ServeOptions;

// Installs the payload limit and the pre-routing, exception and error handlers on `http`.
// `options` and `stopping` must outlive the server.
void add_request_framing(httplib::Server& http, const ServeOptions& options,
                         const std::atomic<bool>& stopping);

}  // namespace vime::serve
