#include "vime/http/fetch.hpp"

#include "vime/error.hpp"
#include "vime/http/curl_easy.hpp"

namespace vime::http {

Response fetch(const Request& request) {
  detail::Transfer transfer(request);
  transfer.finish(curl_easy_perform(transfer.easy));
  return std::move(transfer.response);
}

Json fetch_json(const Request& request, const std::string& what) {
  Response response = fetch(request);
  if (!response.ok()) throw Error(what + ": " + request.url + ": " + response.describe());
  if (response.body.empty()) return Json();
  return response.json(what + ": " + request.url);
}

}  // namespace vime::http
