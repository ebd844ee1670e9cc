// One HTTP POST of a JSON body with libcurl, with a total timeout.
#pragma once

#include <string>

namespace vime::rm {

struct HttpResponse {
  long status = 0;
  std::string body;
};

// Throws std::runtime_error describing the transport failure (refused, reset, timed out).
HttpResponse http_post_json(const std::string& url, const std::string& body, double timeout_s);

}  // namespace vime::rm
