// retrieval_bench: BM25 throughput on the synthetic corpus (synthetic_qa.hpp): index build time,
// then queries/s on 1 thread and on every thread, in process and through `vime retrieve serve`'s
// HTTP server (one query per request, as the search_r1 plugin sends them). Prints one JSON line.
//   retrieval_bench [--docs 100000] [--queries 4000] [--topk 3] [--threads 0 (all)]
#include <atomic>
#include <chrono>
#include <iostream>
#include <string>
#include <thread>
#include <vector>

#include "synthetic_qa.hpp"
#include "vime/error.hpp"
#include "vime/http/fetch.hpp"
#include "vime/retrieval/bm25_index.hpp"
#include "vime/retrieval/retrieval_server.hpp"

namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

// Runs `one(i)` for every query index over `threads` threads; returns queries per second.
template <class F>
double throughput(size_t queries, int threads, F one) {
  std::atomic<size_t> next{0};
  const auto start = Clock::now();
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t) {
    pool.emplace_back([&] {
      for (size_t i = next++; i < queries; i = next++) one(i);
    });
  }
  for (auto& th : pool) th.join();
  return static_cast<double>(queries) / seconds_since(start);
}

}  // namespace

int main(int argc, char** argv) {
  try {
    int64_t docs = 100000, queries = 4000, topk = 3, threads = 0;
    for (int i = 1; i + 1 < argc; i += 2) {
      const std::string flag = argv[i];
      const int64_t v = std::stoll(argv[i + 1]);
      if (flag == "--docs")
        docs = v;
      else if (flag == "--queries")
        queries = v;
      else if (flag == "--topk")
        topk = v;
      else if (flag == "--threads")
        threads = v;
      else
        throw vime::UsageError("unknown flag " + flag);
    }
    if (threads <= 0) threads = std::max(1u, std::thread::hardware_concurrency());
    const auto people = vime::search_task::make_people(docs, 7);
    const auto questions = vime::search_task::make_questions(people);
    std::vector<std::string> query_text;
    for (int64_t i = 0; i < queries; ++i) {
      query_text.push_back(questions[(static_cast<size_t>(i) * 7919) % questions.size()].question);
    }
    auto start = Clock::now();
    vime::retrieval::Bm25Index index(vime::search_task::make_corpus(people));
    const double build_s = seconds_since(start);

    std::atomic<int64_t> found{0};
    auto local = [&](size_t i) {
      found += static_cast<int64_t>(index.search(query_text[i], topk).size());
    };
    const double local_1 = throughput(query_text.size(), 1, local);
    const double local_n = throughput(query_text.size(), static_cast<int>(threads), local);

    vime::retrieval::RetrievalServerOptions options;
    options.port = 0;
    options.threads = static_cast<int>(threads);
    vime::retrieval::RetrievalServer server(index, options);
    server.start();
    const std::string url = server.url() + "/retrieve";
    auto remote = [&](size_t i) {
      vime::Json body = vime::Json::object();
      body["queries"] = vime::Json::Array{vime::Json(query_text[i])};
      body["topk"] = topk;
      body["return_scores"] = false;
      auto r = vime::http::fetch(vime::http::Request::post_json(url, body, 60));
      if (!r.ok()) throw vime::Error("retrieval request failed: " + r.describe());
    };
    const size_t http_queries = std::min<size_t>(query_text.size(), 1000);
    const double http_1 = throughput(http_queries, 1, remote);
    const double http_n = throughput(http_queries, static_cast<int>(threads), remote);
    server.stop();

    vime::Json out = vime::Json::object();
    out["docs"] = docs;
    out["terms"] = static_cast<int64_t>(index.num_terms());
    out["build_s"] = build_s;
    out["threads"] = threads;
    out["topk"] = topk;
    out["queries_per_s_1_thread"] = local_1;
    out["queries_per_s_all_threads"] = local_n;
    out["http_queries_per_s_1_client"] = http_1;
    out["http_queries_per_s_all_clients"] = http_n;
    out["mean_hits"] = static_cast<double>(found.load()) / (2.0 * query_text.size());
    std::cout << out.dump() << std::endl;
    return 0;
  } catch (const std::exception& e) {
    std::cerr << "retrieval_bench: error: " << e.what() << "\n";
    return 1;
  }
}
