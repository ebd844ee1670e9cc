// vime's ChatTemplate on the chat-template goldens' inputs (tests/data/chat_templates/<name>.jsonl,
// the lines that render), one thread: prints "vime renders/s output-MB/s checksum".
// Usage: vime_chat_template_bench TOKENIZER_DIR GOLDENS.jsonl [PASSES]
#include <chrono>
#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

#include "vime/error.hpp"
#include "vime/json.hpp"
#include "vime/tokenizer/chat_template.hpp"

struct Request {
  vime::Json messages, tools, kwargs;
  bool add_generation_prompt;
};

int main(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: vime_chat_template_bench TOKENIZER_DIR GOLDENS.jsonl [PASSES]\n");
    return 2;
  }
  try {
    auto chat = vime::tokenizer::ChatTemplate::from_directory(argv[1]);
    std::vector<Request> requests;
    std::ifstream in(argv[2]);
    std::string line;
    while (std::getline(in, line)) {
      vime::Json g = vime::Json::parse(line, argv[2]);
      if (!g.contains("text")) continue;
      requests.push_back({g.at("messages"), g.at("tools"), g.at("kwargs"),
                          g.at("add_generation_prompt").as_bool()});
    }
    const int passes = argc > 3 ? std::stoi(argv[3]) : 20;
    size_t bytes = 0;
    for (const auto& r : requests)
      bytes += chat.render(r.messages, r.tools, r.add_generation_prompt, r.kwargs).size();
    const auto start = std::chrono::steady_clock::now();
    size_t sink = 0;
    for (int p = 0; p < passes; ++p) {
      for (const auto& r : requests)
        sink += chat.render(r.messages, r.tools, r.add_generation_prompt, r.kwargs).size();
    }
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    const double renders = static_cast<double>(requests.size()) * passes;
    std::printf("vime %.1f %.2f %zu\n", renders / seconds,
                static_cast<double>(sink) / seconds / 1e6, bytes);
    return sink == bytes * static_cast<size_t>(passes) ? 0 : 1;
  } catch (const vime::Error& e) {
    std::fprintf(stderr, "vime_chat_template_bench: %s\n", e.what());
    return 1;
  }
}
