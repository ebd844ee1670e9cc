// search_r1's settings: slime's SEARCH_R1_CONFIGS keys, read from --custom-config-path (flat keys:
// `search_url`, not `local: {search_url}`), with slime's defaults.
#pragma once

#include <cstdint>
#include <string>

#include "qa_em_format.hpp"
#include "vime/args.hpp"

namespace search_r1 {

struct SearchConfig {
  int64_t max_turns = 2;
  int64_t topk = 3;
  int64_t search_concurrency = 256;
  std::string search_backend = "local";  // "local" (HTTP or in-process); "google" is refused
  // HTTP retrieval server (slime's local_search_server contract). Unset with search_corpus or
  // search_index set: the in-process BM25 index instead.
  std::string search_url;
  std::string search_corpus;     // JSONL {"id", "contents"} for the in-process index
  std::string search_index;      // its saved index directory (built there on first use)
  double search_timeout_s = 60;  // local_search's aiohttp timeout
  double bm25_k1 = 0.9, bm25_b = 0.4;
  EmScores scores;  // structure_format_score, final_format_score, retrieval_score, score

  bool in_process() const { return search_url.empty(); }
  // Throws vime::UsageError naming the key on a bad value.
  static SearchConfig from(const vime::Args& args);
};

constexpr const char* kDefaultSearchUrl = "http://127.0.0.1:8000/retrieve";

}  // namespace search_r1
