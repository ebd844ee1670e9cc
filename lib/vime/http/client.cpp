#include "vime/http/client.hpp"

#include <curl/curl.h>

#include <atomic>
#include <mutex>
#include <thread>
#include <unordered_map>
#include <utility>
#include <vector>

#include "vime/http/curl_easy.hpp"

namespace vime::http {
namespace {

struct Entry {
  Client::Id id = 0;
  std::unique_ptr<detail::Transfer> transfer;
  Client::Callback on_done;
};

}  // namespace

struct Client::Impl {
  Impl() {
    detail::ensure_curl_global_init();
    multi = curl_multi_init();
    thread = std::thread([this] { loop(); });
  }

  ~Impl() {
    {
      std::lock_guard<std::mutex> lock(mutex);
      stopping = true;
    }
    curl_multi_wakeup(multi);
    thread.join();
    curl_multi_cleanup(multi);
  }

  void loop();
  void complete(std::unique_ptr<Entry> entry);
  void cancel_active(Id id);

  CURLM* multi = nullptr;
  std::thread thread;
  std::atomic<Id> next_id{1};
  std::atomic<size_t> in_flight{0};
  std::atomic<size_t> peak{0};

  // Handed from any thread to the loop thread.
  std::mutex mutex;
  std::vector<std::unique_ptr<Entry>> to_add;
  std::vector<Id> to_cancel;
  bool cancel_everything = false;
  bool stopping = false;

  // Loop thread only.
  std::unordered_map<Id, std::unique_ptr<Entry>> active;
  std::unordered_map<CURL*, Id> id_of;
};

void Client::Impl::complete(std::unique_ptr<Entry> entry) {
  Response response = std::move(entry->transfer->response);
  Callback on_done = std::move(entry->on_done);
  entry.reset();  // frees the easy handle; its connection stays in the multi handle's cache
  --in_flight;
  try {
    on_done(std::move(response));
  } catch (...) {
    // A callback that throws must not take the loop (and every other request) down.
  }
}

void Client::Impl::cancel_active(Id id) {
  auto it = active.find(id);
  if (it == active.end()) return;
  std::unique_ptr<Entry> entry = std::move(it->second);
  active.erase(it);
  CURL* easy = entry->transfer->easy;
  id_of.erase(easy);
  // Removing an unfinished transfer closes its connection (libcurl cannot reuse it).
  curl_multi_remove_handle(multi, easy);
  entry->transfer->response.cancelled = true;
  entry->transfer->response.status = 0;
  entry->transfer->response.error = "cancelled";
  complete(std::move(entry));
}

void Client::Impl::loop() {
  for (;;) {
    std::vector<std::unique_ptr<Entry>> adds;
    std::vector<Id> cancels;
    bool all = false;
    bool stop = false;
    {
      std::lock_guard<std::mutex> lock(mutex);
      adds.swap(to_add);
      cancels.swap(to_cancel);
      all = std::exchange(cancel_everything, false);
      stop = stopping;
    }
    for (auto& entry : adds) {
      CURL* easy = entry->transfer->easy;
      const Id id = entry->id;
      id_of[easy] = id;
      active.emplace(id, std::move(entry));
      curl_multi_add_handle(multi, easy);
    }
    if (all || stop) {
      cancels.clear();
      for (const auto& [id, entry] : active) cancels.push_back(id);
    }
    for (Id id : cancels) cancel_active(id);
    if (stop) return;

    int running = 0;
    curl_multi_perform(multi, &running);
    int left = 0;
    while (CURLMsg* msg = curl_multi_info_read(multi, &left)) {
      if (msg->msg != CURLMSG_DONE) continue;
      auto id_it = id_of.find(msg->easy_handle);
      if (id_it == id_of.end()) continue;
      auto it = active.find(id_it->second);
      id_of.erase(id_it);
      std::unique_ptr<Entry> entry = std::move(it->second);
      active.erase(it);
      curl_multi_remove_handle(multi, entry->transfer->easy);
      entry->transfer->finish(msg->data.result);
      complete(std::move(entry));
    }
    // Sleeps until a socket is ready, libcurl's next timeout, or curl_multi_wakeup.
    curl_multi_poll(multi, nullptr, 0, 1000, nullptr);
  }
}

Client::Client() : impl_(std::make_unique<Impl>()) {}

Client::~Client() = default;

Client::Id Client::submit(Request request, Callback on_done) {
  auto entry = std::make_unique<Entry>();
  entry->id = impl_->next_id++;
  entry->transfer = std::make_unique<detail::Transfer>(std::move(request));
  entry->on_done = std::move(on_done);
  const Id id = entry->id;
  const size_t now = ++impl_->in_flight;
  size_t peak = impl_->peak.load();
  while (now > peak && !impl_->peak.compare_exchange_weak(peak, now)) {
  }
  {
    std::lock_guard<std::mutex> lock(impl_->mutex);
    impl_->to_add.push_back(std::move(entry));
  }
  curl_multi_wakeup(impl_->multi);
  return id;
}

std::future<Response> Client::send(Request request) {
  auto promise = std::make_shared<std::promise<Response>>();
  std::future<Response> future = promise->get_future();
  submit(std::move(request), [promise](Response r) { promise->set_value(std::move(r)); });
  return future;
}

void Client::cancel(Id id) {
  {
    std::lock_guard<std::mutex> lock(impl_->mutex);
    impl_->to_cancel.push_back(id);
  }
  curl_multi_wakeup(impl_->multi);
}

void Client::cancel_all() {
  {
    std::lock_guard<std::mutex> lock(impl_->mutex);
    impl_->cancel_everything = true;
  }
  curl_multi_wakeup(impl_->multi);
}

size_t Client::in_flight() const { return impl_->in_flight.load(); }

size_t Client::peak_in_flight() const { return impl_->peak.load(); }

}  // namespace vime::http
