// The CPU (Gloo) world, or with a CUDA `device` the NCCL one, of a test worker process started by
// a dist test with --rank R --world W --port P: vime's own launcher layout, one node. Null at world
// size 1.
#pragma once

#include <ATen/Device.h>

#include <chrono>
#include <map>
#include <memory>
#include <string>

#include "vime/dist/process_group.hpp"
#include "vime/dist/rank_env.hpp"

namespace vime::test {

struct WorkerWorld {
  int rank = 0, world_size = 1;
  std::unique_ptr<dist::ProcessGroup> group;  // null at world size 1
};

inline WorkerWorld join_worker_world(const std::map<std::string, std::string>& opt,
                                     const at::Device& device = at::Device(at::kCPU)) {
  dist::RankEnv env;
  env.rank = std::stoi(opt.at("--rank"));
  env.world_size = std::stoi(opt.at("--world"));
  env.local_rank = env.rank;
  env.local_world_size = env.world_size;
  env.master_port = std::stoi(opt.at("--port"));
  env.launcher = "vime";
  WorkerWorld world{env.rank, env.world_size, nullptr};
  if (env.world_size > 1)
    world.group = dist::ProcessGroup::create(env, device, std::chrono::seconds(60));
  return world;
}

}  // namespace vime::test
