// BM25 search over a JSONL corpus ({"id", "contents"} per line) for plugins: the index `vime
// retrieve serve` answers from, in the plugin's own process (search_r1's in-process backend).
// lib/vime/retrieval/bm25_retriever.cpp implements it.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace vime {

class Bm25Retriever {
 public:
  struct Source {
    std::string corpus;     // JSONL; empty: load the saved index from index_dir only
    std::string index_dir;  // the saved index, built (and saved) there when missing or stale;
                            // empty: build in memory, save nothing
    double k1 = 0.9;        // pyserini's defaults
    double b = 0.4;
  };

  // Throws vime::UsageError when neither path is given or the one needed cannot be read.
  explicit Bm25Retriever(const Source& source);
  Bm25Retriever(Bm25Retriever&&) noexcept;
  Bm25Retriever& operator=(Bm25Retriever&&) noexcept;
  ~Bm25Retriever();

  // The contents of the `topk` best documents for `query`, best first; fewer when fewer share a
  // term with it. Thread-safe.
  std::vector<std::string> search(std::string_view query, int64_t topk) const;
  // "loaded DIR/bm25.index" or "built from CORPUS in N s (...)", for the caller's log line.
  const std::string& how_opened() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace vime
