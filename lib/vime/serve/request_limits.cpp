#include "vime/serve/request_limits.hpp"

#include <httplib.h>

#include <algorithm>
#include <cctype>
#include <exception>

#include "vime/serve/request_body.hpp"
#include "vime/serve/server.hpp"

namespace vime::serve {
namespace {

std::string mib(int64_t bytes) {
  return bytes % (1 << 20) == 0 ? std::to_string(bytes >> 20) + " MiB"
                                : std::to_string(bytes) + " bytes";
}

// For the pre-routing handler (before httplib reads the body): answers a chunked body, whose
// size is not known up front, with 411; returns whether it answered.
bool refuse_unbounded_body(const ServeOptions& options, const httplib::Request& req,
                           httplib::Response& res) {
  if (options.max_request_bytes <= 0) return false;
  std::string encoding = req.get_header_value("Transfer-Encoding");
  std::transform(encoding.begin(), encoding.end(), encoding.begin(), ::tolower);
  if (encoding.find("chunked") == std::string::npos) return false;
  res.set_header("Connection", "close");
  send_error(res, 411,
             "a chunked request body is not accepted: send Content-Length (at most "
             "--max-request-bytes " +
                 mib(options.max_request_bytes) + ")");
  return true;
}

bool authorized(const ServeOptions& options, const httplib::Request& req) {
  if (options.api_key.empty() || req.path == "/health") return true;
  return req.get_header_value("Authorization") == "Bearer " + options.api_key;
}

// For httplib's error handler: fills an empty 411/413/414 answer with vLLM's error body.
void describe_limit_error(const ServeOptions& options, const httplib::Request& req,
                          httplib::Response& res) {
  if (!res.body.empty()) return;
  if (res.status == 413) {
    const std::string length = req.get_header_value("Content-Length");
    send_error(res, 413,
               "the request body" + (length.empty() ? std::string() : " of " + length + " bytes") +
                   " is larger than --max-request-bytes " + mib(options.max_request_bytes));
  } else if (res.status == 414) {
    send_error(res, 414, "the request line is too long");
  } else if (res.status == 400) {
    send_error(res, 400, "malformed HTTP request");
  }
}

}  // namespace

void add_request_framing(httplib::Server& http, const ServeOptions& options,
                         const std::atomic<bool>& stopping) {
  // httplib's payload limit skips a larger body without keeping it.
  if (options.max_request_bytes > 0)
    http.set_payload_max_length(static_cast<size_t>(options.max_request_bytes));
  http.set_pre_routing_handler([&options](const httplib::Request& req, httplib::Response& res) {
    if (refuse_unbounded_body(options, req, res)) return httplib::Server::HandlerResponse::Handled;
    if (authorized(options, req)) return httplib::Server::HandlerResponse::Unhandled;
    send_json(res, Json::Object{{"error", "Unauthorized"}}, 401);  // vLLM's api-key middleware
    return httplib::Server::HandlerResponse::Handled;
  });
  http.set_exception_handler(
      [&stopping](const httplib::Request&, httplib::Response& res, std::exception_ptr ep) {
        try {
          std::rethrow_exception(ep);
        } catch (const Error& e) {
          // BadRequest, or the engine rejecting a request (prompt fills the context, bad ids).
          send_error(res, stopping ? 503 : 400, e.what());
        } catch (const std::exception& e) {
          send_error(res, 500, e.what());
        }
      });
  http.set_error_handler([&options](const httplib::Request& req, httplib::Response& res) {
    describe_limit_error(options, req, res);
    if (res.status == 404 && res.body.empty()) {
      send_json(res, Json::Object{{"detail", "Not Found"}}, 404);  // FastAPI's 404
    } else if (res.status == 405 && res.body.empty()) {
      send_json(res, Json::Object{{"detail", "Method Not Allowed"}}, 405);
    } else if (res.status >= 400 && res.body.empty()) {  // e.g. cpp-httplib's 416 for a Range
      send_error(res, res.status,
                 "the request cannot be served (HTTP " + std::to_string(res.status) + ")");
    }
  });
}

}  // namespace vime::serve
