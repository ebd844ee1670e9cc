// vime's tokenizer on the benchmark corpus (tools/tokenizer_bench/make_corpus.js), one document per
// call, one thread: prints "vime MB/s tokens". Usage: vime_tokenizer_bench TOKENIZER_DIR
// CORPUS.jsonl PASSES
#include <chrono>
#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

#include "vime/error.hpp"
#include "vime/json.hpp"
#include "vime/tokenizer/hf_tokenizer.hpp"

int main(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: vime_tokenizer_bench TOKENIZER_DIR CORPUS.jsonl [PASSES]\n");
    return 2;
  }
  try {
    auto tok = vime::tokenizer::HfTokenizer::from_directory(argv[1]);
    std::vector<std::string> docs;
    std::ifstream in(argv[2]);
    std::string line;
    size_t bytes = 0;
    while (std::getline(in, line)) {
      if (line.empty()) continue;
      docs.push_back(vime::Json::parse(line, argv[2]).at("text").as_string());
      bytes += docs.back().size();
    }
    const int passes = argc > 3 ? std::stoi(argv[3]) : 5;
    size_t tokens = 0;
    for (const auto& d : docs) tokens += tok->encode(d).size();  // warm-up, as the HF run does
    const auto start = std::chrono::steady_clock::now();
    size_t sink = 0;
    for (int p = 0; p < passes; ++p) {
      for (const auto& d : docs) sink += tok->encode(d).size();
    }
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    std::printf("vime %.2f %zu\n", static_cast<double>(bytes) * passes / seconds / 1e6, tokens);
    return sink == tokens * static_cast<size_t>(passes) ? 0 : 1;
  } catch (const vime::Error& e) {
    std::fprintf(stderr, "vime_tokenizer_bench: %s\n", e.what());
    return 1;
  }
}
