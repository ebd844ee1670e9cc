// The rollout engine as vLLM servers over HTTP (vime's vllm_rollout.py,
// shared/spec/slime_reference.md §13): tokens in via POST /inference/v1/generate (or
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

#include "vime/args.hpp"
#include "vime/engine_client.hpp"

namespace vime::engine {

struct VllmEngineOptions {
  std::string router_url;                // generation goes through it when set
  std::vector<std::string> worker_urls;  // the vLLM servers: control calls go to each
  std::string api_key;                   // "Authorization: Bearer" on every call
  std::string model_name;                // "model" of each request; empty: not sent
  // Worker choice without a router: consistent_hash (GenerateRequest.session_id -> one worker,
  // least-loaded when it is busy, avoided or there is no session id), round_robin, random,
  // power_of_two, cache_aware (least loaded here).
  std::string policy = "consistent_hash";
  // Requests in flight per worker (--vllm-server-concurrency); generate() waits for a slot.
  int64_t concurrency_per_worker = 512;
  double request_timeout_s = 14400;  // one HTTP request
  double retry_deadline_s = 600;     // retries of one request stop after this (then throw)
  double retry_backoff_s = 0.05;     // first wait before a retry; doubles each time
  double retry_backoff_max_s = 5;
  double avoid_failed_worker_s = 30;  // a worker that failed gets no new requests this long
  double control_timeout_s = 60;      // /pause, /resume
  double abort_sweep_s = 3;           // abort_all() pauses again when requests remain after this

  // --vllm-router-policy, --vllm-server-concurrency, --router-request-timeout-secs; api_key from
  // the passed-through --vllm-api-key (else --router-api-key).
  static VllmEngineOptions from_args(const Args& args, std::vector<std::string> worker_urls,
                                     std::string router_url);
};

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

class VllmEngine final : public EngineClient {
 public:
  explicit VllmEngine(VllmEngineOptions options);
  ~VllmEngine() override;  // cancels what is in flight
  VllmEngine(const VllmEngine&) = delete;
  VllmEngine& operator=(const VllmEngine&) = delete;

  // Blocking, thread-safe. Transport failures, HTTP 408/429/5xx, finish_reason "error" and an
  // "abort" that vime did not ask for (an engine shutting down) are retried with the same request
  // (same seed); other 4xx throw vime::Error at once; retries past the deadline throw naming the
  // URLs and the last error. Returns "abort" (with the partial tokens the server sent) when
  // abort_all() or pause("abort") runs meanwhile.
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
