// The plugins' BM25 search (vime/bm25_retriever.hpp) over open_index() and Bm25Index.
#include "vime/bm25_retriever.hpp"

#include "vime/retrieval/open_index.hpp"

namespace vime {

struct Bm25Retriever::Impl {
  retrieval::Bm25Index index;
  std::string how;
};

Bm25Retriever::Bm25Retriever(const Source& source) : impl_(std::make_unique<Impl>()) {
  retrieval::IndexSource index_source{source.corpus, source.index_dir, {source.k1, source.b}};
  impl_->index = retrieval::open_index(index_source, &impl_->how);
}

Bm25Retriever::Bm25Retriever(Bm25Retriever&&) noexcept = default;
Bm25Retriever& Bm25Retriever::operator=(Bm25Retriever&&) noexcept = default;
Bm25Retriever::~Bm25Retriever() = default;

std::vector<std::string> Bm25Retriever::search(std::string_view query, int64_t topk) const {
  std::vector<std::string> contents;
  for (const auto& hit : impl_->index.search(query, topk)) {
    contents.push_back(impl_->index.doc(hit.doc).contents);
  }
  return contents;
}

const std::string& Bm25Retriever::how_opened() const { return impl_->how; }

}  // namespace vime
