#include "support/ports.hpp"

#include <chrono>
#include <fstream>
#include <iterator>
#include <regex>
#include <string>
#include <thread>

namespace vime::test {

int wait_reported_port(const std::filesystem::path& log, double seconds) {
  const std::regex line(R"(at http://[^\s:/]+:([0-9]+))");
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
  while (true) {
    std::ifstream in(log);
    const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    std::smatch m;
    if (std::regex_search(text, m, line)) return std::stoi(m[1].str());
    if (std::chrono::steady_clock::now() >= deadline) return 0;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
}

}  // namespace vime::test
