// What VllmEngine drives and how: the servers and router, the balancing policy, concurrency,
// timeouts and retries. The flags fill a few fields (from); the caller adds the URLs of the engines
// it started or was given.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "vime/args.hpp"

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
  // the passed-through --vllm-api-key (else --router-api-key). No URLs: the caller sets them.
  static VllmEngineOptions from(const Args& args);
};

}  // namespace vime::engine
