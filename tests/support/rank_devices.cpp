// Multi-rank test entries (ctest sets VIME_TEST_RANKS=N on them) start up to N trainer ranks, one
// GPU each where CUDA is visible. On a machine that shows fewer GPUs than that, their ranks run on
// the CPU (Gloo) instead, as on a machine without CUDA: CUDA_VISIBLE_DEVICES is emptied before
// this process or its children touch CUDA, and one line says so. With enough GPUs they run there.
#include <dirent.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

namespace {

// Counted without initialising CUDA (after that, CUDA_VISIBLE_DEVICES no longer applies here).
int visible_gpus() {
  if (const char* visible = std::getenv("CUDA_VISIBLE_DEVICES")) {
    const std::string list = visible;
    if (list.empty()) return 0;
    int n = 1;
    for (char c : list) n += c == ',';
    return n;
  }
  int n = 0;
  if (DIR* dev = ::opendir("/dev")) {
    while (const dirent* e = ::readdir(dev)) {
      const char* name = e->d_name;
      if (std::strncmp(name, "nvidia", 6) == 0 && name[6] >= '0' && name[6] <= '9') ++n;
    }
    ::closedir(dev);
  }
  return n;
}

const bool kRanksPlaced = [] {
  const char* wanted = std::getenv("VIME_TEST_RANKS");
  if (wanted == nullptr) return false;
  const int ranks = std::atoi(wanted);
  const int gpus = visible_gpus();
  if (gpus == 0 || gpus >= ranks) return false;
  ::setenv("CUDA_VISIBLE_DEVICES", "", 1);
  std::fprintf(stderr,
               "vime_tests: these tests start up to %d ranks and %d GPU(s) are visible: their "
               "ranks run on the CPU (Gloo), CUDA hidden\n",
               ranks, gpus);
  return true;
}();

}  // namespace
