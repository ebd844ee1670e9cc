// The terms BM25 indexes and queries: Lucene's English analysis as pyserini runs it, minus Porter
// stemming: split on anything but letters and digits (non-ASCII bytes count as letters), lower-case
// ASCII, drop Lucene's 33 English stop words.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace vime::retrieval {

std::vector<std::string> analyze(std::string_view text);

}  // namespace vime::retrieval
