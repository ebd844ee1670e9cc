#include "vime/loop/run_ranks.hpp"

#include <ATen/ATen.h>

#include <chrono>
#include <cstdlib>

#include "vime/dist/rank_device.hpp"
#include "vime/dist/rank_env.hpp"
#include "vime/error.hpp"
#include "vime/loop/rollout_backend_options.hpp"

namespace vime::loop {

RunRanks start_ranks(const Args& args, const TrainLoopOptions& options,
                     const RunModelsOptions& models) {
  // vLLM forces NCCL_CUMEM_ENABLE=0 in its processes (vime's launcher does the same for `vime
  // serve`); NCCL peers that disagree on it fail their P2P setup ("Cuda failure 'invalid
  // argument'"), so the trainer matches before its first NCCL communicator.
  if (RolloutBackendOptions::from(args).kind == RolloutBackendKind::kVllm)
    ::setenv("NCCL_CUMEM_ENABLE", "0", 1);
  const auto env = dist::rank_env_from_environment(args);
  const auto device = dist::bind_rank_device(env);
  if (device.is_cuda() && options.distributed_backend != "nccl") {
    throw UsageError("--distributed-backend " + options.distributed_backend +
                     ": vime's GPU ranks talk over NCCL (Gloo carries CPU ranks); drop the flag");
  }
  RunRanks ranks;
  if (!env.is_single()) {
    ranks.world = dist::ProcessGroup::create(
        env, device,
        std::chrono::minutes(std::max<int64_t>(options.distributed_timeout_minutes, 1)));
  }
  at::manual_seed(static_cast<uint64_t>(options.seed));
  ranks.groups = dist::make_parallel_groups(ranks.world.get(), models.tensor_parallel_size);
  return ranks;
}

}  // namespace vime::loop
