// Okapi BM25 over a document collection, scored as Lucene's BM25Similarity (what pyserini runs):
// idf = ln(1 + (N - df + 0.5) / (df + 0.5)), term score = idf * tf / (tf + k1 (1 - b + b
// dl/avgdl)), summed over the query's terms (a repeated query term counts each time); defaults k1
// 0.9, b 0.4 (pyserini's). Differences from pyserini: exact document lengths (Lucene stores them
// lossily) and no Porter stemming (text_analyzer.hpp). Built once, saved to a directory and loaded
// back; search is const and thread-safe.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "vime/retrieval/corpus.hpp"

namespace vime::retrieval {

struct Bm25Params {
  double k1 = 0.9;
  double b = 0.4;
};

struct Hit {
  uint32_t doc = 0;  // index into the collection
  float score = 0;
};

class Bm25Index {
 public:
  Bm25Index() = default;
  Bm25Index(std::vector<Document> docs, Bm25Params params = {}, uint64_t fingerprint = 0);

  // The `topk` best documents for `query`, best first (equal scores: lower doc first). Documents
  // sharing no term with the query are never returned, so fewer than topk may come back.
  std::vector<Hit> search(std::string_view query, int64_t topk) const;

  const Document& doc(uint32_t i) const { return docs_[i]; }
  size_t size() const { return docs_.size(); }
  size_t num_terms() const { return term_offsets_.empty() ? 0 : term_offsets_.size() - 1; }
  const Bm25Params& params() const { return params_; }
  uint64_t fingerprint() const { return fingerprint_; }

  // DIR/bm25.index (written atomically; DIR is created). load throws vime::UsageError naming the
  // file when it is missing, truncated or of another format.
  void save(const std::filesystem::path& dir) const;
  static Bm25Index load(const std::filesystem::path& dir);
  static std::filesystem::path index_file(const std::filesystem::path& dir);

 private:
  int64_t term_id(std::string_view term) const;  // -1 when absent
  void compute_doc_norms();

  std::vector<Document> docs_;
  Bm25Params params_;
  uint64_t fingerprint_ = 0;
  double avg_doc_len_ = 0;
  std::vector<uint32_t> doc_len_;
  std::vector<std::string> terms_;      // sorted
  std::vector<uint64_t> term_offsets_;  // postings of terms_[t]: [term_offsets_[t], [t + 1])
  std::vector<uint32_t> posting_docs_;
  std::vector<uint32_t> posting_tfs_;
  std::vector<float> doc_norm_;  // k1 (1 - b + b dl/avgdl) per document
};

}  // namespace vime::retrieval
