#include "vime/http/curl_easy.hpp"

#include <mutex>

namespace vime::http::detail {
namespace {

size_t write_body(char* data, size_t size, size_t count, void* user) {
  static_cast<std::string*>(user)->append(data, size * count);
  return size * count;
}

}  // namespace

void ensure_curl_global_init() {
  static std::once_flag once;
  std::call_once(once, [] { curl_global_init(CURL_GLOBAL_DEFAULT); });
}

Transfer::Transfer(Request r) : request(std::move(r)) {
  ensure_curl_global_init();
  easy = curl_easy_init();
  curl_easy_setopt(easy, CURLOPT_URL, request.url.c_str());
  curl_easy_setopt(easy, CURLOPT_NOSIGNAL, 1L);  // threads: no SIGALRM for DNS timeouts
  curl_easy_setopt(easy, CURLOPT_ERRORBUFFER, error_buffer);
  curl_easy_setopt(easy, CURLOPT_WRITEFUNCTION, write_body);
  curl_easy_setopt(easy, CURLOPT_WRITEDATA, &response.body);
  curl_easy_setopt(easy, CURLOPT_PRIVATE, this);
  curl_easy_setopt(easy, CURLOPT_PROXY, "");  // engines are on the cluster network, never proxied
  if (request.timeout_s > 0) {
    curl_easy_setopt(easy, CURLOPT_TIMEOUT_MS, static_cast<long>(request.timeout_s * 1000));
  }
  if (request.connect_timeout_s > 0) {
    curl_easy_setopt(easy, CURLOPT_CONNECTTIMEOUT_MS,
                     static_cast<long>(request.connect_timeout_s * 1000));
  }
  if (request.method == "POST") {
    curl_easy_setopt(easy, CURLOPT_POST, 1L);
    curl_easy_setopt(easy, CURLOPT_POSTFIELDS, request.body.c_str());
    curl_easy_setopt(easy, CURLOPT_POSTFIELDSIZE_LARGE,
                     static_cast<curl_off_t>(request.body.size()));
  } else if (request.method != "GET") {
    curl_easy_setopt(easy, CURLOPT_CUSTOMREQUEST, request.method.c_str());
    if (!request.body.empty()) {
      curl_easy_setopt(easy, CURLOPT_POSTFIELDS, request.body.c_str());
      curl_easy_setopt(easy, CURLOPT_POSTFIELDSIZE_LARGE,
                       static_cast<curl_off_t>(request.body.size()));
    }
  }
  header_list = curl_slist_append(header_list, "Expect:");  // no 100-continue round trip
  for (const auto& [name, value] : request.headers) {
    header_list = curl_slist_append(header_list, (name + ": " + value).c_str());
  }
  curl_easy_setopt(easy, CURLOPT_HTTPHEADER, header_list);
}

Transfer::~Transfer() {
  if (easy) curl_easy_cleanup(easy);
  if (header_list) curl_slist_free_all(header_list);
}

void Transfer::finish(CURLcode code) {
  if (code == CURLE_OK) {
    curl_easy_getinfo(easy, CURLINFO_RESPONSE_CODE, &response.status);
    return;
  }
  response.timed_out = code == CURLE_OPERATION_TIMEDOUT;
  response.error = std::string(curl_easy_strerror(code));
  if (error_buffer[0] != '\0') response.error += ": " + std::string(error_buffer);
}

}  // namespace vime::http::detail
