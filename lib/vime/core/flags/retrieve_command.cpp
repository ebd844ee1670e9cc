// `vime retrieve serve --corpus corpus.jsonl [--index DIR] [--port 8000]`: the BM25 retrieval
// server of Search-R1 (lib/vime/retrieval).
#include "vime/core/flags/command_flags.hpp"

namespace vime::core::flags {
namespace {
using enum FlagKind;
constexpr FlagSpec kFlags[] = {
    {.name = "COMMAND",
     .kind = kString,
     .default_value = nullptr,
     .help = "serve: answer POST /retrieve over HTTP (slime's local_search_server contract)",
     .choices = "serve",
     .required = true},
    {"--corpus", kString, nullptr,
     "JSONL corpus, one {\"id\": ..., \"contents\": \"\\\"Title\\\"\\ntext\"} per line "
     "(needed unless --index holds an index already)"},
    {"--index", kString, nullptr,
     "index directory: loaded when it holds an index of this corpus, else built there once"},
    {"--host", kString, "127.0.0.1", "address to listen on"},
    {"--port", kInt, "8000", "port to listen on (0: any free port)"},
    {"--topk", kInt, "3", "passages per query when a request gives no \"topk\""},
    {"--k1", kFloat, "0.9", "BM25 k1 (pyserini's default)"},
    {"--b", kFloat, "0.4", "BM25 b (pyserini's default)"},
    {"--threads", kInt, "16", "HTTP worker threads"},
};
}  // namespace
FlagGroup retrieve_command() { return {"retrieve", "vime retrieve", kFlags}; }
}  // namespace vime::core::flags
