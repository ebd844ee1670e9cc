// One HTTP exchange as vime's HTTP code sees it (libcurl underneath): the request, and the
// response or the transport failure. Shared by the blocking fetch() and the many-in-flight
// client that the vLLM backend uses.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "vime/json.hpp"

namespace vime::http {

struct Request {
  std::string method = "GET";  // GET | POST | DELETE | PUT
  std::string url;             // http://host:port/path?query
  std::vector<std::pair<std::string, std::string>> headers;
  std::string body;
  double timeout_s = 0;  // whole exchange; 0: none
  double connect_timeout_s = 10;

  static Request get(std::string url, double timeout_s = 0);
  // POST with a JSON body (Content-Type: application/json).
  static Request post_json(std::string url, const Json& body, double timeout_s = 0);
  Request& bearer(const std::string& api_key);  // no-op for an empty key
  Request& header(std::string name, std::string value);
};

struct Response {
  long status = 0;  // HTTP status; 0 when no response came (see error)
  std::string body;
  std::string error;  // non-empty: the transport failed (refused, reset, timed out, cancelled)
  bool timed_out = false;
  bool cancelled = false;

  bool ok() const { return error.empty() && status >= 200 && status < 300; }
  // The body as JSON; throws vime::Error naming `what` when it is not JSON.
  Json json(const std::string& what) const;
  // "HTTP 503: <body>" or "connection refused ..." for error messages.
  std::string describe() const;
};

}  // namespace vime::http
