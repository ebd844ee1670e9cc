// Blocking HTTP for control-plane calls (health checks, /pause, /workers, weight-transfer phases):
// one libcurl easy handle per call, on the calling thread. Generation, with hundreds of requests
// in flight, goes through http::Client instead.
#pragma once

#include "vime/http/http_request.hpp"

namespace vime::http {

// Never throws for transport or HTTP failures: they come back in the Response.
Response fetch(const Request& request);

// fetch() that expects a 2xx: throws vime::Error "<what>: <url>: HTTP 500: ..." otherwise, and
// returns the body parsed as JSON (null for an empty body).
Json fetch_json(const Request& request, const std::string& what);

}  // namespace vime::http
