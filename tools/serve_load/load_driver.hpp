// A bounded load-and-abuse run against a `vime serve` on 127.0.0.1: N requests, C at a time, over
// raw sockets so a client can also hang up mid-body or mid-answer and send what no HTTP library
// would (a broken request line, a chunked or oversized body). Valid completions must answer 200;
// every bad request a 4xx in vLLM's error shape; the server must stay up. Used by the [serve_load]
// test (a few hundred requests) and tools/serve_load/serve_load (the full run).
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

namespace vime::tools {

struct LoadOptions {
  int port = 0;
  int requests = 2000;
  int concurrency = 64;
  uint64_t seed = 1;
  double abort_fraction = 0.15;         // client hangs up: before the answer, or mid-body
  double malformed_fraction = 0.35;     // a bad request that must get a 4xx
  int64_t max_request_bytes = 1 << 20;  // the server's --max-request-bytes (413 above it)
  int max_tokens = 8;                   // per valid completion
  double timeout_s = 60;                // per request
  int fuzz_requests = 0;                // run_serve_load: fuzzed requests after the load
};

struct LoadReport {
  int sent = 0;
  int valid_ok = 0, valid_failed = 0;  // 200 with choices / anything else
  int bad_ok = 0, bad_failed = 0;      // 4xx in vLLM's shape / anything else
  int aborted = 0;                     // client hang-ups (no answer expected)
  std::map<int, int> status_counts;    // HTTP status of every answered request
  std::vector<std::string> failures;   // the first few, described
  std::vector<double> valid_latency_ms;
  double wall_s = 0;
  double percentile_ms(double p) const;  // of valid_latency_ms
  std::string summary() const;
};

// Runs the load against 127.0.0.1:options.port; `between` (if set) is called every 10% of the
// requests (to sample the server's RSS).
LoadReport run_load(const LoadOptions& options, const std::function<void()>& between = {});

// Fuzzes request bodies and HTTP framing: `requests` mutations (bit flips, cuts, splices, JSON
// words) of valid /v1/completions, /v1/chat/completions, /tokenize and /inference/v1/generate
// requests, one connection each. Every answer must be 200, or a 4xx in vLLM's shape; a 5xx, a
// dropped connection or no answer is a failure (bad_failed).
LoadReport fuzz_requests(int port, int requests, uint64_t seed, int concurrency = 8);

// VmRSS of `pid` in KiB (0 when it cannot be read).
int64_t rss_kib(int pid);

// The whole run against a `vime serve` child: started on a free port with
// --max-request-bytes options.max_request_bytes and --max-model-len 256 (its output in `log`),
// warmed up with 32 valid requests, loaded, checked to be alive and healthy, stopped with SIGTERM.
struct ServeLoadResult {
  LoadReport report;
  LoadReport fuzz;  // fuzz_requests after the load (options.fuzz_requests of them)
  int64_t rss_before_kib = 0, rss_peak_kib = 0, rss_after_kib = 0;
  bool alive_after = false;  // the server still answered GET /health after the load
  int exit_status = -1;      // its wait status after SIGTERM (0: clean)
  std::string error;         // the run could not start
  std::string summary() const;
};
ServeLoadResult run_serve_load(const std::string& vime_bin, const std::string& model_dir,
                               LoadOptions options, const std::string& log);

}  // namespace vime::tools
