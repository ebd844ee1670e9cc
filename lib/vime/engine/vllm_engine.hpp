// The rollout engine as vLLM servers over HTTP (vllm-project/vime's
// vime/rollout/vllm_rollout.py): tokens in via POST /inference/v1/generate (or
// /v1/completions where that 404s), through vllm-router when there is one, else balanced over the
// workers here. Requests are retried, on another worker when there is one, until a deadline, so a
// dead engine never loses a sample. abort_all() and pause/resume drive every worker's /pause and
// /resume (vLLM dev mode). All requests share one http::Client (one thread); generate() blocks its
// caller only.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "vime/engine/vllm_engine_options.hpp"
#include "vime/engine_client.hpp"
#include "vime/error.hpp"

namespace vime::engine {

struct VllmWorkerStats {
  std::string url;
  int64_t in_flight = 0;
  int64_t served = 0;             // requests answered (any finish reason)
  int64_t failures = 0;           // attempts that failed and were retried
  bool uses_completions = false;  // /inference/v1/generate answered 404
};

struct VllmEngineStats {
  int64_t in_flight = 0;  // HTTP requests out now
  int64_t waiting = 0;    // generate() calls waiting for a slot
  int64_t retries = 0;
  std::vector<VllmWorkerStats> workers;  // the router first when there is one
};

// generate() gave up on the engines (none answered within the retry deadline), not on the request:
// a caller with other engines may send it there.
class EnginesUnreachable : public Error {
 public:
  explicit EnginesUnreachable(const std::string& message) : Error(message) {}
};

class VllmEngine final : public EngineClient {
 public:
  explicit VllmEngine(VllmEngineOptions options);
  ~VllmEngine() override;  // cancels what is in flight
  VllmEngine(const VllmEngine&) = delete;
  VllmEngine& operator=(const VllmEngine&) = delete;

  // Blocking, thread-safe. Transport failures, HTTP 408/429/5xx, finish_reason "error" and an
  // "abort" that vime did not ask for (an engine shutting down) are retried with the same request
  // (same seed); other 4xx throw vime::Error at once; retries past the deadline throw
  // EnginesUnreachable naming the URLs and the last error. Returns "abort" (with the partial tokens
  // the server sent) when abort_all() or pause("abort") runs meanwhile.
  GenerateResponse generate(const GenerateRequest& request) override;
  // POST /pause?mode=abort then /resume on every worker (a worker without /pause gets its
  // connections closed); requests not sent yet or waiting to retry end "abort". Returns once every
  // request that was in flight has returned.
  void abort_all() override;
  // POST /pause?mode=<abort|wait|keep> / POST /resume on every worker (weight updates). Throws
  // vime::Error naming the worker that failed.
  void pause(const std::string& mode = "keep");
  void resume();

  void add_worker(const std::string& url);
  void remove_worker(const std::string& url);  // its requests in flight finish or retry elsewhere
  std::vector<std::string> workers() const;

  void set_weight_version(std::string version);  // for responses without weight_version
  VllmEngineStats stats() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace vime::engine
