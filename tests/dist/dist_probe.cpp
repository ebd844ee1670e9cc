// dist_probe: a trainer rank in miniature, for the [dist] tests. Started without a rank
// environment and with --actor-num-gpus-per-node N it launches N copies of itself through vime's
// launcher, exactly as `vime train` does; as a rank (vime's launcher, torchrun or Slurm env) it
// joins the c10d Gloo group and runs one scenario:
//
//   dist_probe SCENARIO [ARG...] [-- vime train flags]
//     allreduce           each rank contributes rank + 1; prints the sum
//     bytes               broadcast_bytes from rank 0 and all_gather_bytes; prints both
//     exit-at RANK CODE   RANK exits with CODE after the rendezvous; the others block in an
//                         all-reduce that RANK never joins
//     sleep               the last rank sleeps (a rank to kill from outside); the others wait
//                         for it in an all-reduce
//
// Every rank prints "rank R pid P ready" after the rendezvous. DIST_PROBE_TIMEOUT_S (default 30)
// is the rendezvous and collective timeout; DIST_PROBE_IGNORE_SIGTERM=1 makes the ranks ignore
// SIGTERM (a rank the launcher must SIGKILL).
#include <ATen/ATen.h>
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <string>
#include <thread>
#include <vector>

#include "vime/core/arg_parser.hpp"
#include "vime/dist/local_launcher.hpp"
#include "vime/dist/process_group.hpp"
#include "vime/dist/rank_env.hpp"
#include "vime/error.hpp"

namespace {

std::chrono::milliseconds timeout() {
  const char* text = std::getenv("DIST_PROBE_TIMEOUT_S");
  return std::chrono::milliseconds(static_cast<int64_t>((text ? std::atof(text) : 30.0) * 1000));
}

int run_rank(const vime::dist::RankEnv& env, const std::vector<std::string>& scenario) {
  if (std::getenv("DIST_PROBE_IGNORE_SIGTERM") != nullptr) ::signal(SIGTERM, SIG_IGN);
  auto group = vime::dist::ProcessGroup::create(env, at::Device(at::kCPU), timeout());
  const char* passed = std::getenv("DIST_PROBE_PASSED");  // the launcher passes the env through
  std::printf("rank %d pid %d ready (%s, local rank %d of %d, node %d, %s:%d, passed %s)\n",
              env.rank, static_cast<int>(::getpid()), env.launcher.c_str(), env.local_rank,
              env.local_world_size, env.node_rank, env.master_addr.c_str(), env.master_port,
              passed ? passed : "-");
  std::fflush(stdout);
  const std::string& name = scenario.at(0);
  if (name == "allreduce") {
    const double sum = group->all_reduce_sum(env.rank + 1);
    std::printf("rank %d of %d: sum %g\n", env.rank, group->size(), sum);
    std::printf("rank %d done", env.rank);  // no '\n': the launcher flushes the partial line
  } else if (name == "bytes") {
    const std::string hello =
        group->broadcast_bytes(env.rank == 0 ? std::string("hello from rank 0") : std::string(), 0);
    const auto all = group->all_gather_bytes(std::string(env.rank + 1, 'a' + env.rank));
    std::string joined;
    for (const auto& s : all) joined += (joined.empty() ? "" : ",") + s;
    std::printf("rank %d: broadcast '%s' gathered %s\n", env.rank, hello.c_str(), joined.c_str());
  } else if (name == "exit-at" && scenario.size() == 3) {
    if (env.rank == std::stoi(scenario[1])) {
      std::fflush(stdout);
      std::_Exit(std::stoi(scenario[2]));
    }
    group->barrier();
    std::printf("rank %d: the barrier completed without the exiting rank\n", env.rank);
  } else if (name == "sleep") {
    if (env.rank == env.world_size - 1) std::this_thread::sleep_for(std::chrono::minutes(10));
    group->barrier();
  } else {
    std::fprintf(stderr, "dist_probe: unknown scenario '%s'\n", name.c_str());
    return 2;
  }
  std::fflush(stdout);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::string> all(argv, argv + argc), scenario, flags;
  bool in_flags = false;
  for (int i = 1; i < argc; ++i) {
    if (!in_flags && all[i] == "--") {
      in_flags = true;
    } else {
      (in_flags ? flags : scenario).push_back(all[i]);
    }
  }
  if (scenario.empty()) {
    std::fprintf(stderr, "usage: dist_probe SCENARIO [ARG...] [-- vime train flags]\n");
    return 2;
  }
  try {
    const vime::Args args = vime::core::parse_args(flags);
    if (auto plan = vime::dist::local_launch_plan(args, all, 0)) {
      plan->program = "dist_probe";
      return vime::dist::launch_local_ranks(*plan, std::cout);
    }
    return run_rank(vime::dist::rank_env_from_environment(args), scenario);
  } catch (const vime::UsageError& e) {
    std::fprintf(stderr, "dist_probe: error: %s\n", e.what());
    return 2;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "dist_probe: error: %s\n", e.what());
    return 1;
  }
}
