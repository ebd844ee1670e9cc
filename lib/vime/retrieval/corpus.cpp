#include "vime/retrieval/corpus.hpp"

#include <fstream>

#include "vime/error.hpp"
#include "vime/json.hpp"

namespace vime::retrieval {

std::vector<Document> read_corpus(const std::filesystem::path& path) {
  std::ifstream in(path);
  if (!in) throw UsageError("--corpus " + path.string() + ": cannot open the file");
  std::vector<Document> docs;
  std::string line;
  for (int64_t number = 1; std::getline(in, line); ++number) {
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    const std::string where = path.string() + ":" + std::to_string(number);
    Json row;
    try {
      row = Json::parse(line, where);
    } catch (const Error& e) {
      throw UsageError(std::string("--corpus ") + e.what());
    }
    const Json* id = row.is_object() ? row.find("id") : nullptr;
    const Json* contents = row.is_object() ? row.find("contents") : nullptr;
    if (!contents || !contents->is_string() || !id || !(id->is_string() || id->is_int())) {
      throw UsageError("--corpus " + where +
                       ": each line must be {\"id\": ..., \"contents\": \"...\"} (pyserini's "
                       "JsonCollection)");
    }
    docs.push_back(
        {id->is_string() ? id->as_string() : std::to_string(id->as_int()), contents->as_string()});
  }
  return docs;
}

uint64_t corpus_fingerprint(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw UsageError("--corpus " + path.string() + ": cannot open the file");
  uint64_t hash = 14695981039346656037ull;
  char buffer[1 << 16];
  while (in.read(buffer, sizeof(buffer)) || in.gcount() > 0) {
    for (std::streamsize i = 0; i < in.gcount(); ++i) {
      hash ^= static_cast<unsigned char>(buffer[i]);
      hash *= 1099511628211ull;
    }
  }
  return hash;
}

}  // namespace vime::retrieval
