// A libFuzzer-style driver for g++ (no coverage feedback): runs every seed of the corpus
// directories, then mutations of them (bit flips, byte edits, cut/duplicated ranges, splices, the
// harness's dictionary words) through LLVMFuzzerTestOneInput. Built with ASan+UBSan, a memory or
// undefined-behaviour error ends the run; the input that caused it is written to
// ./crash-<harness>-<n> first. Under clang, the same harnesses link -fsanitize=fuzzer instead.
//   fuzz_<name> [--runs N] [--seconds T] [--seed S] [--max-len B] CORPUS_DIR...
// (--seconds: stop the mutations after T seconds, or after N runs, whichever comes first.)
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <csignal>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "fuzz_harness.hpp"

extern "C" void __sanitizer_set_death_callback(void (*callback)(void)) __attribute__((weak));

// Under g++, UBSan is a runtime of its own that exits without ASan's death callback unless it
// aborts; aborting, it reaches the SIGABRT handler below, which saves the input.
extern "C" const char* __ubsan_default_options() {
  return "print_stacktrace=1:halt_on_error=1:abort_on_error=1";
}

namespace {

std::string g_name = "fuzz";
const std::string* g_current = nullptr;  // the input being run, for the crash file

void save_current() {
  if (g_current == nullptr) return;
  const std::string path = "crash-" + g_name + "-" + std::to_string(::getpid());
  if (FILE* f = std::fopen(path.c_str(), "wb")) {
    std::fwrite(g_current->data(), 1, g_current->size(), f);
    std::fclose(f);
    std::fprintf(stderr, "fuzz: the crashing input is in %s\n", path.c_str());
  }
}

void on_signal(int sig) {
  save_current();
  std::signal(sig, SIG_DFL);
  std::raise(sig);
}

void on_timeout(int) {
  std::fprintf(stderr, "fuzz: one input ran for more than 30 s (a hang?)\n");
  save_current();
  std::_Exit(1);
}

void run_one(const std::string& input) {
  g_current = &input;
  ::alarm(30);
  LLVMFuzzerTestOneInput(reinterpret_cast<const uint8_t*>(input.data()), input.size());
  ::alarm(0);
  g_current = nullptr;
}

std::string mutate(std::string s, const std::vector<std::string>& corpus,
                   const std::vector<std::string>& dictionary, std::mt19937_64& rng,
                   size_t max_len) {
  const int edits = 1 + static_cast<int>(rng() % 4);
  for (int e = 0; e < edits; ++e) {
    auto pos = [&](size_t n) { return n == 0 ? size_t{0} : static_cast<size_t>(rng() % n); };
    switch (rng() % 9) {
      case 0:  // flip a bit
        if (!s.empty()) s[pos(s.size())] ^= static_cast<char>(1 << (rng() % 8));
        break;
      case 1:  // replace a byte (often an interesting one)
        if (!s.empty()) {
          static const char kBytes[] = {0,   '\n', '"',    '\\',   '{',    '}',    '[', ']', ':',
                                        ',', '%',  '\x7f', '\xff', '\xc3', '\xe2', '-', '0', '9'};
          s[pos(s.size())] = rng() % 2 ? static_cast<char>(rng()) : kBytes[rng() % sizeof(kBytes)];
        }
        break;
      case 2:  // insert a byte
        s.insert(pos(s.size() + 1), 1, static_cast<char>(rng()));
        break;
      case 3:  // cut a range
        if (!s.empty()) {
          const size_t at = pos(s.size());
          s.erase(at, 1 + pos(std::min<size_t>(s.size() - at, 64)));
        }
        break;
      case 4:  // duplicate a range
        if (!s.empty()) {
          const size_t at = pos(s.size());
          const std::string piece = s.substr(at, 1 + pos(std::min<size_t>(s.size() - at, 64)));
          s.insert(pos(s.size() + 1), piece);
        }
        break;
      case 5:  // a dictionary word
        if (!dictionary.empty()) s.insert(pos(s.size() + 1), dictionary[rng() % dictionary.size()]);
        break;
      case 6:  // splice with another seed
        if (!corpus.empty()) {
          const std::string& other = corpus[rng() % corpus.size()];
          s = s.substr(0, pos(s.size() + 1)) + other.substr(pos(other.size() + 1));
        }
        break;
      case 7:  // truncate
        s.resize(pos(s.size() + 1));
        break;
      default:  // a run of one byte (deep nesting, long numbers)
        s.insert(pos(s.size() + 1), 1 + pos(256), "[{(0 9e-\\"[rng() % 10]);
        break;
    }
  }
  if (s.size() > max_len) s.resize(max_len);
  return s;
}

}  // namespace

int main(int argc, char** argv) {
  g_name = std::filesystem::path(argv[0]).filename().string();
  long long runs = 10000;
  double seconds = 0;  // 0: no time limit
  uint64_t seed = 1;
  size_t max_len = 64 << 10;
  std::vector<std::string> dirs;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--runs" && i + 1 < argc)
      runs = std::atoll(argv[++i]);
    else if (a == "--seconds" && i + 1 < argc)
      seconds = std::atof(argv[++i]);
    else if (a == "--seed" && i + 1 < argc)
      seed = std::strtoull(argv[++i], nullptr, 10);
    else if (a == "--max-len" && i + 1 < argc)
      max_len = std::strtoull(argv[++i], nullptr, 10);
    else
      dirs.push_back(a);
  }
  std::vector<std::string> corpus;
  for (const auto& d : dirs) {
    std::error_code ec;
    for (const auto& f : std::filesystem::directory_iterator(d, ec)) {
      std::ifstream in(f.path(), std::ios::binary);
      std::stringstream text;
      text << in.rdbuf();
      corpus.push_back(text.str());
    }
  }
  if (corpus.empty()) corpus.push_back("");
  if (__sanitizer_set_death_callback) __sanitizer_set_death_callback(save_current);
  for (int sig : {SIGSEGV, SIGABRT, SIGFPE, SIGBUS, SIGILL}) std::signal(sig, on_signal);
  std::signal(SIGALRM, on_timeout);
  std::set_terminate([] {
    save_current();
    std::fprintf(stderr, "fuzz: an exception escaped the harness\n");
    std::abort();
  });
  if (LLVMFuzzerInitialize) LLVMFuzzerInitialize(&argc, &argv);
  const std::vector<std::string> dictionary = fuzz_dictionary();
  const auto start = std::chrono::steady_clock::now();
  for (const auto& input : corpus) run_one(input);
  std::mt19937_64 rng(seed);
  auto elapsed = [&] {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  };
  long long done = 0;
  for (; done < runs; ++done) {
    if (seconds > 0 && done % 64 == 0 && elapsed() > seconds) break;
    const std::string input =
        mutate(corpus[rng() % corpus.size()], corpus, dictionary, rng, max_len);
    run_one(input);
  }
  const double s = elapsed();
  const auto executions = static_cast<long long>(corpus.size()) + done;
  std::cout << g_name << ": " << executions << " executions (" << corpus.size() << " seeds) in "
            << s << " s (" << static_cast<long long>(executions / std::max(s, 1e-9))
            << "/s), crashes: 0" << std::endl;
  return 0;
}
