// A retrieval corpus: JSONL lines {"id": ..., "contents": "\"Title\"\ntext"} (pyserini's
// JsonCollection and Search-R1's wiki-18.jsonl).
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

namespace vime::retrieval {

struct Document {
  std::string id;
  std::string contents;
};

// Throws vime::UsageError naming the file and line on a missing file or a bad line (an "id" may be
// a string or a number; "contents" must be a string; blank lines are skipped).
std::vector<Document> read_corpus(const std::filesystem::path& path);
// 64-bit FNV-1a of the file's bytes: tells a saved index whether it was built from this corpus.
uint64_t corpus_fingerprint(const std::filesystem::path& path);

}  // namespace vime::retrieval
