// vime retrieve serve: Okapi BM25 over a JSONL corpus behind the /retrieve contract of Search-R1's
// retrieval server (lib/vime/retrieval), for the search_r1 plugin or slime's own
// generate_with_search.py.
#include <pthread.h>

#include <csignal>
#include <iostream>
#include <string>

#include "commands.hpp"
#include "vime/core/arg_parser.hpp"
#include "vime/core/flags/command_flags.hpp"
#include "vime/error.hpp"
#include "vime/retrieval/open_index.hpp"
#include "vime/retrieval/retrieval_server.hpp"

namespace vime::app {
namespace {

constexpr const char* kUsage =
    R"(usage: vime retrieve serve --corpus corpus.jsonl [--index DIR] [--port 8000]

Serves Okapi BM25 search (Lucene's scoring, k1 0.9 and b 0.4 as pyserini) over a JSONL corpus of
{"id", "contents"} lines. With --index DIR the index is built once, saved there and loaded on the
next start (rebuilt when the corpus or k1/b change).
  POST /retrieve {"queries": [...], "topk": 3, "return_scores": false}
       -> {"result": [[{"id": ..., "contents": ...}, ...], ...]}
  GET  /health
Ctrl-C or SIGTERM stops it.
)";

struct RetrieveOptions {
  retrieval::IndexSource source;
  retrieval::RetrievalServerOptions server;

  static RetrieveOptions from(const Args& args) {
    RetrieveOptions o;
    if (args.is_set("corpus")) o.source.corpus = args.get_string("corpus");
    if (args.is_set("index")) o.source.index_dir = args.get_string("index");
    if (o.source.corpus.empty() && o.source.index_dir.empty()) {
      throw UsageError("serve needs --corpus corpus.jsonl (and/or --index DIR)");
    }
    o.source.params.k1 = args.get_double("k1");
    o.source.params.b = args.get_double("b");
    if (!(o.source.params.k1 >= 0)) throw UsageError("--k1 must be >= 0");
    if (!(o.source.params.b >= 0 && o.source.params.b <= 1)) {
      throw UsageError("--b must be in [0, 1]");
    }
    o.server.host = args.get_string("host");
    const int64_t port = args.get_int("port");
    if (port < 0 || port > 65535) throw UsageError("--port must be a port number in [0, 65535]");
    o.server.port = static_cast<int>(port);
    o.server.default_topk = args.get_int("topk");
    if (o.server.default_topk < 1) throw UsageError("--topk must be >= 1");
    const int64_t threads = args.get_int("threads");
    if (threads < 1 || threads > 1024) throw UsageError("--threads must be in [1, 1024]");
    o.server.threads = static_cast<int>(threads);
    return o;
  }
};

}  // namespace

int run_retrieve(const Arguments& argv) {
  const auto& flags = core::flags::retrieve_flags();
  if (auto code = help_exit_code(argv, kUsage, flags)) return *code;
  const auto o = RetrieveOptions::from(core::parse_args(argv, flags));

  sigset_t signals;  // to sigwait below, not to the server's threads (started after this)
  sigemptyset(&signals);
  sigaddset(&signals, SIGINT);
  sigaddset(&signals, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);

  std::string how;
  const auto index = retrieval::open_index(o.source, &how);
  std::cout << "vime retrieve: index " << how << std::endl;
  retrieval::RetrievalServer server(index, o.server);
  server.start();
  std::cout << "vime retrieve: serving " << index.size() << " documents at " << server.url()
            << "/retrieve" << std::endl;
  int signal = 0;
  sigwait(&signals, &signal);
  server.stop();
  std::cout << "vime retrieve: stopped after " << server.queries_served() << " queries"
            << std::endl;
  return 0;
}

}  // namespace vime::app
