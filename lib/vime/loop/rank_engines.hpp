// The embedded engines of a job with several ranks: every rank > 0 serves
// its NativeEngine over vLLM's HTTP API (`vime serve`'s routes, in this process, on the rank's own
// Model) and publishes its address in the job's c10d store; rank 0 reads the addresses there and
// drives the fleet.
#pragma once

#include <chrono>
#include <string>
#include <vector>

#include "vime/serve/server.hpp"

namespace c10d {
class Store;
}

namespace vime::loop {

struct RankEngineAddress {
  int rank = 0;
  std::string url;      // http://host:port
  std::string api_key;  // the server's own key ("Authorization: Bearer")
};

// The store key rank `rank` publishes its engine under: "vime/engine/<rank>".
std::string rank_engine_key(int rank);

// The host address the other ranks reach this one at: the source address toward the host of the
// store (a c10d::TCPStore); 127.0.0.1 for any other store.
std::string advertised_host(c10d::Store& store);

class RankEngineServer {
 public:
  // Serves `engine` (which runs `model`) on a free port of `host`'s interfaces (127.0.0.1 when
  // `host` is a loopback address, else 0.0.0.0) with a random API key, and publishes both as rank
  // `rank`'s engine. `threads`: HTTP workers (each blocks on one generation). Throws vime::Error
  // when it cannot listen.
  RankEngineServer(engine::NativeEngine& engine, Model& model, const Tokenizer& tokenizer,
                   c10d::Store& store, int rank, const std::string& host, int threads);
  ~RankEngineServer();  // stops serving: requests in flight end "abort"
  RankEngineServer(const RankEngineServer&) = delete;
  RankEngineServer& operator=(const RankEngineServer&) = delete;

  const RankEngineAddress& address() const { return address_; }

 private:
  std::string api_key_;
  serve::Server server_;
  RankEngineAddress address_;
};

// The engines of ranks stride, 2 * stride, .. < world_size as they published them (stride: the
// tensor-parallel size, whose rank 0 of each group drives its engine), waiting up to `timeout` for
// all; then throws vime::Error naming the ranks that did not publish.
std::vector<RankEngineAddress> wait_for_rank_engines(c10d::Store& store, int world_size,
                                                     std::chrono::milliseconds timeout,
                                                     int stride = 1);

}  // namespace vime::loop
