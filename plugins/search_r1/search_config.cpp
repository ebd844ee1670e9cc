#include "search_config.hpp"

#include "vime/error.hpp"

namespace search_r1 {
namespace {

const vime::Json* find(const vime::Args& args, const char* key) {
  return args.has(key) && args.is_set(key) ? &args.get(key) : nullptr;
}

int64_t positive_int(const vime::Args& args, const char* key, int64_t fallback) {
  const vime::Json* v = find(args, key);
  if (!v) return fallback;
  if (!v->is_int() || v->as_int() < 1) {
    throw vime::UsageError(std::string("search_r1: ") + key +
                           " (--custom-config-path) must be an integer >= 1, got " + v->dump());
  }
  return v->as_int();
}

std::string text(const vime::Args& args, const char* key, std::string fallback) {
  const vime::Json* v = find(args, key);
  if (!v) return fallback;
  if (!v->is_string()) {
    throw vime::UsageError(std::string("search_r1: ") + key +
                           " (--custom-config-path) must be a string, got " + v->dump());
  }
  return v->as_string();
}

vime::Json number(const vime::Args& args, const char* key, vime::Json fallback) {
  const vime::Json* v = find(args, key);
  if (!v) return fallback;
  if (!v->is_number()) {
    throw vime::UsageError(std::string("search_r1: ") + key +
                           " (--custom-config-path) must be a number, got " + v->dump());
  }
  return *v;
}

}  // namespace

SearchConfig SearchConfig::from(const vime::Args& args) {
  SearchConfig c;
  c.max_turns = positive_int(args, "max_turns", c.max_turns);
  c.topk = positive_int(args, "topk", c.topk);
  c.search_concurrency = positive_int(args, "search_concurrency", c.search_concurrency);
  c.search_backend = text(args, "search_backend", c.search_backend);
  if (c.search_backend == "google") {
    throw vime::UsageError(
        "search_r1: search_backend google (serper.dev) is not supported; use search_backend local "
        "with search_url (a retrieval server such as `vime retrieve serve`) or search_corpus");
  }
  if (c.search_backend != "local") {
    throw vime::UsageError("search_r1: search_backend must be local, got '" + c.search_backend +
                           "'");
  }
  c.search_corpus = text(args, "search_corpus", "");
  c.search_index = text(args, "search_index", "");
  const bool in_process = !c.search_corpus.empty() || !c.search_index.empty();
  c.search_url = text(args, "search_url", in_process ? "" : kDefaultSearchUrl);
  if (c.search_url.empty() && !in_process) {
    throw vime::UsageError(
        "search_r1: search_url is empty; give a retrieval server's URL, or search_corpus / "
        "search_index for the in-process BM25 index");
  }
  c.search_timeout_s = number(args, "search_timeout_s", vime::Json(60.0)).as_double();
  c.bm25_k1 = number(args, "bm25_k1", vime::Json(0.9)).as_double();
  c.bm25_b = number(args, "bm25_b", vime::Json(0.4)).as_double();
  number(args, "format_score", vime::Json(0.2));  // slime passes it; compute_score_em ignores it
  c.scores.structure_format_score =
      number(args, "structure_format_score", c.scores.structure_format_score);
  c.scores.final_format_score = number(args, "final_format_score", c.scores.final_format_score);
  c.scores.retrieval_score = number(args, "retrieval_score", c.scores.retrieval_score);
  c.scores.score = number(args, "score", c.scores.score);
  return c;
}

}  // namespace search_r1
