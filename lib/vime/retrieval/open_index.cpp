#include "vime/retrieval/open_index.hpp"

#include <chrono>
#include <cstdio>

#include "vime/error.hpp"

namespace vime::retrieval {

Bm25Index open_index(const IndexSource& source, std::string* how) {
  namespace fs = std::filesystem;
  if (source.corpus.empty() && source.index_dir.empty()) {
    throw UsageError("a retrieval index needs --corpus corpus.jsonl and/or --index DIR");
  }
  const bool saved =
      !source.index_dir.empty() && fs::exists(Bm25Index::index_file(source.index_dir));
  const uint64_t fingerprint = source.corpus.empty() ? 0 : corpus_fingerprint(source.corpus);
  if (saved) {
    Bm25Index index = Bm25Index::load(source.index_dir);
    const bool same_params =
        index.params().k1 == source.params.k1 && index.params().b == source.params.b;
    if (source.corpus.empty() || (index.fingerprint() == fingerprint && same_params)) {
      if (how) *how = "loaded " + Bm25Index::index_file(source.index_dir).string();
      return index;
    }
  } else if (source.corpus.empty()) {
    throw UsageError("--index " + source.index_dir.string() +
                     ": no index there yet; give --corpus corpus.jsonl to build it");
  }
  const auto start = std::chrono::steady_clock::now();
  Bm25Index index(read_corpus(source.corpus), source.params, fingerprint);
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  char took[32];
  std::snprintf(took, sizeof(took), "%.1f", seconds);
  std::string text = "built from " + source.corpus.string() + " in " + took + " s (" +
                     std::to_string(index.size()) + " documents, " +
                     std::to_string(index.num_terms()) + " terms)";
  if (!source.index_dir.empty()) {
    index.save(source.index_dir);
    text += ", saved to " + Bm25Index::index_file(source.index_dir).string();
  }
  if (how) *how = text;
  return index;
}

}  // namespace vime::retrieval
