// The index `vime retrieve serve` and the search_r1 plugin use: loaded from --index DIR when it was
// built from this corpus with these parameters, else built from the corpus (and saved to DIR when
// one is given).
#pragma once

#include <filesystem>
#include <string>

#include "vime/retrieval/bm25_index.hpp"

namespace vime::retrieval {

struct IndexSource {
  std::filesystem::path corpus;     // empty: load from index_dir only
  std::filesystem::path index_dir;  // empty: build in memory, save nothing
  Bm25Params params;
};

// Throws vime::UsageError when neither path is given, or the needed one cannot be read. `how` is
// set to "loaded DIR" / "built from CORPUS in N s (saved to DIR)" for the caller's log line.
Bm25Index open_index(const IndexSource& source, std::string* how = nullptr);

}  // namespace vime::retrieval
