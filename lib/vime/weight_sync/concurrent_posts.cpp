#include "vime/weight_sync/concurrent_posts.hpp"

#include <condition_variable>
#include <mutex>
#include <thread>

#include "vime/error.hpp"
#include "vime/http/fetch.hpp"

namespace vime::weight_sync {

struct ConcurrentPosts::State {
  std::mutex mutex;
  std::condition_variable answered;
  std::vector<http::Request> requests;
  std::vector<http::Response> responses;
  std::vector<bool> done;
  size_t remaining = 0;
};

ConcurrentPosts::ConcurrentPosts(std::vector<http::Request> requests, std::string what)
    : state_(std::make_shared<State>()), what_(std::move(what)) {
  state_->requests = std::move(requests);
  const size_t n = state_->requests.size();
  state_->responses.resize(n);
  state_->done.assign(n, false);
  state_->remaining = n;
  for (size_t i = 0; i < n; ++i) {
    std::thread([state = state_, i] {
      http::Response response = http::fetch(state->requests[i]);
      std::lock_guard<std::mutex> lock(state->mutex);
      state->responses[i] = std::move(response);
      state->done[i] = true;
      --state->remaining;
      state->answered.notify_all();
    }).detach();
  }
}

ConcurrentPosts::~ConcurrentPosts() = default;

std::string ConcurrentPosts::first_failure() const {
  std::lock_guard<std::mutex> lock(state_->mutex);
  for (size_t i = 0; i < state_->done.size(); ++i) {
    if (state_->done[i] && !state_->responses[i].ok()) {
      return what_ + " on " + state_->requests[i].url + ": " + state_->responses[i].describe();
    }
  }
  return "";
}

std::string ConcurrentPosts::status() const {
  std::lock_guard<std::mutex> lock(state_->mutex);
  std::string text;
  for (size_t i = 0; i < state_->done.size(); ++i) {
    text += (text.empty() ? "" : ", ") + state_->requests[i].url + " ";
    text += state_->done[i] ? "answered " + state_->responses[i].describe() : "has not answered";
  }
  return what_ + ": " + text;
}

void ConcurrentPosts::join_and_check() const {
  {
    std::unique_lock<std::mutex> lock(state_->mutex);
    state_->answered.wait(lock, [&] { return state_->remaining == 0; });
  }
  if (std::string failure = first_failure(); !failure.empty()) throw Error(failure);
}

}  // namespace vime::weight_sync
