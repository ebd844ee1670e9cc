#include "vime/retrieval/bm25_index.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <fstream>
#include <map>
#include <unordered_map>

#include "vime/core/atomic_file.hpp"
#include "vime/error.hpp"
#include "vime/retrieval/text_analyzer.hpp"

namespace vime::retrieval {
namespace {

constexpr char kMagic[8] = {'V', 'I', 'M', 'E', 'B', 'M', '2', '5'};
constexpr uint32_t kFormatVersion = 1;

class Writer {
 public:
  template <class T>
  void pod(const T& v) {
    out_.append(reinterpret_cast<const char*>(&v), sizeof(T));
  }
  template <class T>
  void pods(const std::vector<T>& v) {
    pod<uint64_t>(v.size());
    out_.append(reinterpret_cast<const char*>(v.data()), v.size() * sizeof(T));
  }
  void str(const std::string& s) {
    pod<uint64_t>(s.size());
    out_ += s;
  }
  const std::string& bytes() const { return out_; }

 private:
  std::string out_;
};

class Reader {
 public:
  Reader(std::string bytes, std::string where) : in_(std::move(bytes)), where_(std::move(where)) {}
  template <class T>
  T pod() {
    T v;
    need(sizeof(T));
    std::memcpy(&v, in_.data() + pos_, sizeof(T));
    pos_ += sizeof(T);
    return v;
  }
  template <class T>
  std::vector<T> pods() {
    const auto n = pod<uint64_t>();
    need_items(n, sizeof(T));
    std::vector<T> v(n);
    std::memcpy(v.data(), in_.data() + pos_, n * sizeof(T));
    pos_ += n * sizeof(T);
    return v;
  }
  std::string str() {
    const auto n = pod<uint64_t>();
    need_items(n, 1);
    std::string s = in_.substr(pos_, n);
    pos_ += n;
    return s;
  }
  void need_items(uint64_t n, size_t size) {
    if (n > (in_.size() - pos_) / size) bad();
  }
  void need(size_t n) {
    if (in_.size() - pos_ < n) bad();
  }
  bool at_end() const { return pos_ == in_.size(); }
  [[noreturn]] void bad() const {
    throw UsageError("--index " + where_ +
                     ": truncated or corrupt (delete it and run again to rebuild)");
  }

 private:
  std::string in_;
  std::string where_;
  size_t pos_ = 0;
};

}  // namespace

Bm25Index::Bm25Index(std::vector<Document> docs, Bm25Params params, uint64_t fingerprint)
    : docs_(std::move(docs)), params_(params), fingerprint_(fingerprint) {
  if (docs_.size() >= UINT32_MAX) throw UsageError("--corpus: more than 4e9 documents");
  // term -> (doc, tf) pairs in doc order, then CSR over sorted terms.
  std::unordered_map<std::string, std::vector<std::pair<uint32_t, uint32_t>>> postings;
  doc_len_.resize(docs_.size());
  double total_len = 0;
  std::unordered_map<std::string, uint32_t> tf;
  for (uint32_t d = 0; d < docs_.size(); ++d) {
    tf.clear();
    const auto terms = analyze(docs_[d].contents);
    for (const auto& t : terms) ++tf[t];
    doc_len_[d] = static_cast<uint32_t>(terms.size());
    total_len += static_cast<double>(terms.size());
    for (auto& [term, count] : tf) postings[term].emplace_back(d, count);
  }
  avg_doc_len_ = docs_.empty() ? 0 : total_len / static_cast<double>(docs_.size());
  terms_.reserve(postings.size());
  for (const auto& entry : postings) terms_.push_back(entry.first);
  std::sort(terms_.begin(), terms_.end());
  term_offsets_.reserve(terms_.size() + 1);
  term_offsets_.push_back(0);
  for (const auto& term : terms_) {
    auto& list = postings[term];
    std::sort(list.begin(), list.end());
    for (const auto& [doc, count] : list) {
      posting_docs_.push_back(doc);
      posting_tfs_.push_back(count);
    }
    term_offsets_.push_back(posting_docs_.size());
  }
  compute_doc_norms();
}

void Bm25Index::compute_doc_norms() {
  doc_norm_.resize(docs_.size());
  for (size_t d = 0; d < docs_.size(); ++d) {
    doc_norm_[d] = static_cast<float>(
        params_.k1 * (1.0 - params_.b + params_.b * doc_len_[d] / std::max(avg_doc_len_, 1e-9)));
  }
}

int64_t Bm25Index::term_id(std::string_view term) const {
  auto it = std::lower_bound(terms_.begin(), terms_.end(), term);
  if (it == terms_.end() || *it != term) return -1;
  return it - terms_.begin();
}

std::vector<Hit> Bm25Index::search(std::string_view query, int64_t topk) const {
  if (topk <= 0 || docs_.empty()) return {};
  // Per-thread accumulators over the whole collection; `touched` lists the docs to reset.
  thread_local std::vector<float> scores;
  thread_local std::vector<uint32_t> touched;
  if (scores.size() < docs_.size()) scores.assign(docs_.size(), 0.0f);
  touched.clear();
  const double n = static_cast<double>(docs_.size());
  for (const auto& term : analyze(query)) {
    const int64_t t = term_id(term);
    if (t < 0) continue;
    const uint64_t begin = term_offsets_[t], end = term_offsets_[t + 1];
    const double df = static_cast<double>(end - begin);
    const double idf = std::log(1.0 + (n - df + 0.5) / (df + 0.5));
    for (uint64_t p = begin; p < end; ++p) {
      const uint32_t d = posting_docs_[p];
      const double f = posting_tfs_[p];
      if (scores[d] == 0.0f) touched.push_back(d);
      scores[d] += static_cast<float>(idf * f / (f + doc_norm_[d]));
    }
  }
  std::vector<Hit> hits;
  hits.reserve(touched.size());
  for (uint32_t d : touched) {
    hits.push_back({d, scores[d]});
    scores[d] = 0.0f;
  }
  auto better = [](const Hit& a, const Hit& b) {
    return a.score != b.score ? a.score > b.score : a.doc < b.doc;
  };
  const size_t k = std::min<size_t>(static_cast<size_t>(topk), hits.size());
  std::partial_sort(hits.begin(), hits.begin() + static_cast<std::ptrdiff_t>(k), hits.end(),
                    better);
  hits.resize(k);
  return hits;
}

std::filesystem::path Bm25Index::index_file(const std::filesystem::path& dir) {
  return dir / "bm25.index";
}

void Bm25Index::save(const std::filesystem::path& dir) const {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) throw UsageError("--index " + dir.string() + ": cannot create it: " + ec.message());
  Writer w;
  for (char c : kMagic) w.pod(c);
  w.pod(kFormatVersion);
  w.pod(params_.k1);
  w.pod(params_.b);
  w.pod(fingerprint_);
  w.pod(avg_doc_len_);
  w.pod<uint64_t>(docs_.size());
  for (const auto& d : docs_) {
    w.str(d.id);
    w.str(d.contents);
  }
  w.pods(doc_len_);
  w.pod<uint64_t>(terms_.size());
  for (const auto& t : terms_) w.str(t);
  w.pods(term_offsets_);
  w.pods(posting_docs_);
  w.pods(posting_tfs_);
  AtomicFile file(index_file(dir));
  file.write(w.bytes().data(), w.bytes().size());
  file.commit();
}

Bm25Index Bm25Index::load(const std::filesystem::path& dir) {
  const auto path = index_file(dir);
  std::ifstream in(path, std::ios::binary);
  if (!in) throw UsageError("--index " + path.string() + ": no index there");
  std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  Reader r(std::move(bytes), path.string());
  for (char c : kMagic) {
    if (r.pod<char>() != c) {
      throw UsageError("--index " + path.string() + ": not a vime BM25 index");
    }
  }
  if (r.pod<uint32_t>() != kFormatVersion) {
    throw UsageError("--index " + path.string() +
                     ": written by another vime version (delete it to rebuild)");
  }
  Bm25Index index;
  index.params_.k1 = r.pod<double>();
  index.params_.b = r.pod<double>();
  index.fingerprint_ = r.pod<uint64_t>();
  index.avg_doc_len_ = r.pod<double>();
  const auto num_docs = r.pod<uint64_t>();
  r.need_items(num_docs, 16);
  index.docs_.resize(num_docs);
  for (auto& d : index.docs_) {
    d.id = r.str();
    d.contents = r.str();
  }
  index.doc_len_ = r.pods<uint32_t>();
  const auto num_terms = r.pod<uint64_t>();
  r.need_items(num_terms, 8);
  index.terms_.resize(num_terms);
  for (auto& t : index.terms_) t = r.str();
  index.term_offsets_ = r.pods<uint64_t>();
  index.posting_docs_ = r.pods<uint32_t>();
  index.posting_tfs_ = r.pods<uint32_t>();
  // Every offset and doc id must be in range, so search never reads out of bounds.
  bool ok = r.at_end() && index.doc_len_.size() == num_docs &&
            index.term_offsets_.size() == num_terms + 1 && index.term_offsets_.front() == 0 &&
            index.term_offsets_.back() == index.posting_docs_.size() &&
            index.posting_tfs_.size() == index.posting_docs_.size() &&
            std::is_sorted(index.term_offsets_.begin(), index.term_offsets_.end());
  for (size_t i = 0; ok && i < index.posting_docs_.size(); ++i)
    ok = index.posting_docs_[i] < num_docs;
  if (!ok) r.bad();
  index.compute_doc_norms();
  return index;
}

}  // namespace vime::retrieval
