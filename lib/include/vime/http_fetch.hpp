// Blocking HTTP for plugins (a reward service, a retrieval server, a tool's web API): one request
// on the calling thread, through libvime's libcurl. lib/vime/http/http_fetch.cpp implements it.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "vime/json.hpp"

namespace vime {

struct HttpRequest {
  std::string method = "GET";  // GET | POST | PUT | DELETE
  std::string url;             // http://host:port/path?query
  std::vector<std::pair<std::string, std::string>> headers;
  std::string body;
  double timeout_s = 0;           // the whole exchange; 0: none
  double connect_timeout_s = 10;  // 0: only timeout_s bounds the connect

  // POST with a JSON body (Content-Type: application/json).
  static HttpRequest post_json(std::string url, const Json& body, double timeout_s = 0);
};

struct HttpResponse {
  long status = 0;  // HTTP status; 0 when no response came (see error)
  std::string body;
  std::string error;  // non-empty: the transport failed (refused, reset, timed out)
  bool timed_out = false;

  bool ok() const { return error.empty() && status >= 200 && status < 300; }
  // "HTTP 503: <body>" (the body cut at 300 bytes) or the transport error, for messages.
  std::string describe() const;
};

// Never throws for transport or HTTP failures: they come back in the response.
HttpResponse http_fetch(const HttpRequest& request);

}  // namespace vime
