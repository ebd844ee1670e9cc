// Many HTTP requests in flight without a thread each: one event-loop thread drives a libcurl multi
// handle (curl_multi_poll, woken by curl_multi_wakeup when work is submitted or cancelled).
// Connections are kept alive and reused across requests to the same host. The vLLM backend sends
// every generation request through one Client.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <future>
#include <memory>

#include "vime/http/http_request.hpp"

namespace vime::http {

class Client {
 public:
  using Id = uint64_t;
  using Callback = std::function<void(Response)>;

  Client();
  ~Client();  // cancels everything in flight (callbacks run with cancelled = true), joins
  Client(const Client&) = delete;
  Client& operator=(const Client&) = delete;

  // Thread-safe. `on_done` runs exactly once, on the loop thread (keep it short; it must not
  // destroy the Client). Transport failures and HTTP errors come back in the Response.
  Id submit(Request request, Callback on_done);
  std::future<Response> send(Request request);

  // Ends a transfer now, closing its connection (the server sees the disconnect); its callback
  // gets Response.cancelled = true. Unknown or finished ids are ignored. Thread-safe.
  void cancel(Id id);
  void cancel_all();

  size_t in_flight() const;       // submitted and not yet called back
  size_t peak_in_flight() const;  // the most in_flight() has been

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace vime::http
