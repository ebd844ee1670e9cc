// search(query) of slime's generate_with_search.py: the top-k passages from the local retrieval
// server (HTTP) or the in-process BM25 index, formatted by _passages2string.
#pragma once

#include <string>
#include <vector>

#include "search_config.hpp"

namespace search_r1 {

// "Doc 1(Title: t) text\nDoc 2(...": each content's first line is its title.
std::string passages_to_string(const std::vector<std::string>& contents);

// The passages' contents for `query`, at most config.search_concurrency searches at once across
// all threads. An HTTP failure prints one line to stderr and returns no passages (slime's
// local_search does the same); a bad in-process index throws vime::UsageError.
std::vector<std::string> search(const SearchConfig& config, const std::string& query);

}  // namespace search_r1
