// The plugins' HTTP (vime/http_fetch.hpp) over fetch(): its own small types, so that fetch's can
// change without changing the plugin ABI.
#include "vime/http_fetch.hpp"

#include "vime/http/fetch.hpp"

namespace vime {

HttpRequest HttpRequest::post_json(std::string url, const Json& body, double timeout_s) {
  HttpRequest r;
  r.method = "POST";
  r.url = std::move(url);
  r.body = body.dump();
  r.timeout_s = timeout_s;
  r.headers.emplace_back("Content-Type", "application/json");
  return r;
}

std::string HttpResponse::describe() const {
  http::Response response;
  response.status = status;
  response.body = body;
  response.error = error;
  return response.describe();
}

HttpResponse http_fetch(const HttpRequest& request) {
  http::Request r;
  r.method = request.method;
  r.url = request.url;
  r.headers = request.headers;
  r.body = request.body;
  r.timeout_s = request.timeout_s;
  r.connect_timeout_s = request.connect_timeout_s;
  http::Response got = http::fetch(r);
  HttpResponse out;
  out.status = got.status;
  out.body = std::move(got.body);
  out.error = std::move(got.error);
  out.timed_out = got.timed_out;
  return out;
}

}  // namespace vime
