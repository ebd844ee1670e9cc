// A fixed set of threads running submitted tasks in order of submission; the rollout runs one
// sample per task, so the thread count is the cap on requests in flight.
#pragma once

#include <condition_variable>
#include <cstddef>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace vime::rollout {

class WorkerPool {
 public:
  explicit WorkerPool(size_t num_threads);
  ~WorkerPool();  // runs what is queued, then joins
  WorkerPool(const WorkerPool&) = delete;
  WorkerPool& operator=(const WorkerPool&) = delete;

  // Tasks must not throw (each catches its own errors).
  void submit(std::function<void()> task);
  size_t num_threads() const { return threads_.size(); }

 private:
  void run();

  std::mutex mutex_;
  std::condition_variable ready_;
  std::deque<std::function<void()>> queue_;
  bool stopping_ = false;
  std::vector<std::thread> threads_;
};

}  // namespace vime::rollout
