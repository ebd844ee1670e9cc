// HTTP calls that block until a collective completes (/init_weight_transfer_engine,
// /update_weights) run on their own threads while this process joins the collective. Each thread
// is detached and owns its result, so a failed round can walk away from a server that hangs.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "vime/http/http_request.hpp"

namespace vime::weight_sync {

class ConcurrentPosts {
 public:
  // Starts every request at once; `what` names the route in errors ("/update_weights").
  ConcurrentPosts(std::vector<http::Request> requests, std::string what);
  ~ConcurrentPosts();

  // The first failure among the answers in so far ("" while none failed): for the NCCL waits.
  std::string first_failure() const;
  // Each server's state, for a wait that gave up: "<what>: <url> answered 200 OK, <url> has not
  // answered".
  std::string status() const;
  // Waits for all answers; throws vime::Error naming the first server that did not answer 2xx.
  void join_and_check() const;

 private:
  struct State;
  std::shared_ptr<State> state_;
  std::string what_;
};

}  // namespace vime::weight_sync
