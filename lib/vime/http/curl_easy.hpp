// libcurl easy-handle set-up shared by fetch() and http::Client: options, headers, body capture.
#pragma once

#include <curl/curl.h>

#include <memory>

#include "vime/http/http_request.hpp"

namespace vime::http::detail {

// Everything one transfer owns; lives until the transfer ends.
struct Transfer {
  CURL* easy = nullptr;
  curl_slist* header_list = nullptr;
  Request request;
  Response response;
  char error_buffer[CURL_ERROR_SIZE] = {0};

  explicit Transfer(Request r);
  ~Transfer();
  Transfer(const Transfer&) = delete;
  Transfer& operator=(const Transfer&) = delete;

  // Fills response.status/error/timed_out from a finished transfer's result code.
  void finish(CURLcode code);
};

// curl_global_init exactly once, thread-safely.
void ensure_curl_global_init();

}  // namespace vime::http::detail
