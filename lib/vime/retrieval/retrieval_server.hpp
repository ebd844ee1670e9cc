// `vime retrieve serve`: a Bm25Index behind the HTTP contract of Search-R1's retrieval_server.py,
// which slime's local_search_server.py calls:
//   POST /retrieve {"queries": [q, ...], "topk": k, "return_scores": bool}
//     -> {"result": [[{"id", "contents"}, ...], ...]}                      (return_scores false)
//     -> {"result": [[{"document": {"id", "contents"}, "score": s}, ...], ...]}   (true)
//   GET /health -> {"status": "ok", "documents": N}
// Requests are served by a thread pool; searches are independent and lock-free.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>

#include "vime/json.hpp"
#include "vime/retrieval/bm25_index.hpp"

namespace vime::retrieval {

struct RetrievalServerOptions {
  std::string host = "127.0.0.1";
  int port = 8000;  // 0: any free port
  int threads = 16;
  int64_t default_topk = 3;  // when a request has no "topk"
  int64_t max_topk = 1000;
  size_t max_queries = 4096;  // per request
};

// The /retrieve answer for `request` (the JSON body); throws vime::Error on a malformed request
// (the server answers 400 with the message). Shared by the server and its tests.
Json retrieve(const Bm25Index& index, const Json& request, const RetrievalServerOptions& options);

class RetrievalServer {
 public:
  // `index` must outlive the server.
  RetrievalServer(const Bm25Index& index, RetrievalServerOptions options);
  ~RetrievalServer();  // stop()
  RetrievalServer(const RetrievalServer&) = delete;
  RetrievalServer& operator=(const RetrievalServer&) = delete;

  // Binds and serves on a background thread; returns the port. Throws vime::Error when the address
  // cannot be bound.
  int start();
  void stop();
  std::string url() const;         // http://host:port
  int64_t queries_served() const;  // total queries answered (for tests and logs)

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace vime::retrieval
