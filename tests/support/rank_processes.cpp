#include "support/rank_processes.hpp"

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <chrono>
#include <fstream>
#include <sstream>
#include <thread>

#include "vime/ckpt/safetensors.hpp"
#include "vime/http/net.hpp"

extern char** environ;

namespace vime::test {
namespace fs = std::filesystem;
namespace {

std::string read_file(const fs::path& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

}  // namespace

std::vector<fs::path> run_ranks(const std::string& binary, const fs::path& dir,
                                const std::string& tag, int world, std::vector<std::string> extra) {
  const int port = http::free_port();
  std::vector<pid_t> pids;
  std::vector<fs::path> outs, logs;
  for (int r = 0; r < world; ++r) {
    outs.push_back(dir / (tag + "_rank" + std::to_string(r) + ".safetensors"));
    logs.push_back(dir / (tag + "_rank" + std::to_string(r) + ".log"));
    std::vector<std::string> args = {binary,
                                     "--rank",
                                     std::to_string(r),
                                     "--world",
                                     std::to_string(world),
                                     "--port",
                                     std::to_string(port),
                                     "--out",
                                     outs.back().string()};
    args.insert(args.end(), extra.begin(), extra.end());
    std::vector<char*> argv;
    for (auto& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_addopen(&actions, 1, logs.back().c_str(), O_WRONLY | O_CREAT | O_TRUNC,
                                     0644);
    posix_spawn_file_actions_adddup2(&actions, 1, 2);
    pid_t pid = 0;
    REQUIRE(posix_spawn(&pid, argv[0], &actions, nullptr, argv.data(), environ) == 0);
    posix_spawn_file_actions_destroy(&actions);
    pids.push_back(pid);
  }
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(90);
  std::vector<int> status(world, -1);
  size_t done = 0;
  while (done < pids.size()) {
    for (int r = 0; r < world; ++r) {
      if (status[r] != -1) continue;
      int s = 0;
      if (waitpid(pids[r], &s, WNOHANG) == pids[r]) {
        status[r] = s;
        ++done;
      }
    }
    if (std::chrono::steady_clock::now() > deadline) {
      for (int r = 0; r < world; ++r) {
        if (status[r] == -1) {
          kill(pids[r], SIGKILL);
          waitpid(pids[r], nullptr, 0);
        }
      }
      FAIL("ranks of " << tag << " ran over 90 s: " << read_file(logs[0]));
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  for (int r = 0; r < world; ++r) {
    INFO(tag << " rank " << r << ": " << read_file(logs[r]));
    REQUIRE(WIFEXITED(status[r]));
    REQUIRE(WEXITSTATUS(status[r]) == 0);
  }
  return outs;
}

std::map<std::string, at::Tensor> read_tensors(const fs::path& path) {
  ckpt::SafetensorsFile file(path);
  std::map<std::string, at::Tensor> out;
  for (const auto& name : file.names()) out[name] = file.get(name).clone();
  return out;
}

}  // namespace vime::test
