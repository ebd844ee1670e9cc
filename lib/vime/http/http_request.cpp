#include "vime/http/http_request.hpp"

#include "vime/error.hpp"

namespace vime::http {

Request Request::get(std::string url, double timeout_s) {
  Request r;
  r.url = std::move(url);
  r.timeout_s = timeout_s;
  return r;
}

Request Request::post_json(std::string url, const Json& body, double timeout_s) {
  Request r;
  r.method = "POST";
  r.url = std::move(url);
  r.body = body.dump();
  r.timeout_s = timeout_s;
  r.headers.emplace_back("Content-Type", "application/json");
  return r;
}

Request& Request::bearer(const std::string& api_key) {
  if (!api_key.empty()) headers.emplace_back("Authorization", "Bearer " + api_key);
  return *this;
}

Request& Request::header(std::string name, std::string value) {
  headers.emplace_back(std::move(name), std::move(value));
  return *this;
}

Json Response::json(const std::string& what) const { return Json::parse(body, what); }

std::string Response::describe() const {
  if (!error.empty()) return error;
  constexpr size_t kMaxBody = 300;
  std::string text = "HTTP " + std::to_string(status);
  if (!body.empty()) {
    text += ": " + (body.size() > kMaxBody ? body.substr(0, kMaxBody) + "..." : body);
  }
  return text;
}

}  // namespace vime::http
