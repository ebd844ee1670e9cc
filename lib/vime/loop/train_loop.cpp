#include "vime/loop/train_loop.hpp"

#include <ATen/ATen.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <memory>
#include <ostream>

#include "vime/dist/parallel_groups.hpp"
#include "vime/dist/process_group.hpp"
#include "vime/dist/rank_device.hpp"
#include "vime/dist/rank_env.hpp"
#include "vime/error.hpp"
#include "vime/loop/async_options.hpp"
#include "vime/loop/controller.hpp"
#include "vime/loop/rank_channel.hpp"
#include "vime/loop/rollout_backend.hpp"
#include "vime/loop/rollout_backend_options.hpp"
#include "vime/loop/rollout_step.hpp"
#include "vime/loop/run_models.hpp"
#include "vime/loop/run_models_options.hpp"
#include "vime/loop/train_loop_options.hpp"
#include "vime/loop/trainer.hpp"
#include "vime/metrics/metrics_logger.hpp"
#include "vime/metrics/progress_bar.hpp"

namespace vime::loop {
namespace {

// The processes of the run: one per GPU (vime's launcher, torchrun or Slurm), a world of one
// running alone; their tensor x context x data parallel groups in Megatron's rank order
// (tensor-parallel ranks adjacent). Rank 0 is the controller.
struct RunRanks {
  std::unique_ptr<dist::ProcessGroup> world;  // null alone
  dist::ParallelGroups groups;
  bool is_controller() const { return !world || world->rank() == 0; }
};

// Binds this rank's device, joins the world (every rank calls it) and seeds the RNG (--seed).
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
  ranks.groups =
      dist::make_parallel_groups(ranks.world.get(), models.tensor_parallel_size,
                                 models.context_parallel_size, models.expert_parallel_size);
  return ranks;
}

// Ranks > 0: no data, rollout or metrics; each rollout they take rank 0's order and run the step
// with it (their engines serve rank 0's requests in the meantime).
int run_follower(const Args& args, const TrainLoopOptions& options, const RunModelsOptions& models,
                 const RunRanks& ranks, std::ostream& console) {
  auto tokenizer = load_run_tokenizer(models);
  auto trainer = make_trainer(args, options, models, ranks.groups, console);
  RankChannel channel(*ranks.world);
  const auto range = channel.receive_range();
  auto backend = make_follower_backend(args, *trainer->actor_model, tokenizer.get(),
                                       range.start_rollout_id, *ranks.world);
  FollowerRole role(*trainer, *backend, options, ranks.world->rank());
  for (int64_t rollout_id = range.start_rollout_id; rollout_id < range.num_rollout; ++rollout_id) {
    auto order = channel.receive(rollout_id);
    if (order.train) run_step(*trainer, *backend, options, order, role);
  }
  channel.wait_finish();
  return 0;
}

}  // namespace

int run_training(const Args& given_args, std::ostream& console) {
  const Args args = with_run_defaults(given_args);
  const auto options = TrainLoopOptions::from(args);
  const auto async = AsyncOptions::from(args);
  const auto models = RunModelsOptions::from(args);
  const auto ranks = start_ranks(args, options, models);
  if (!ranks.is_controller()) return run_follower(args, options, models, ranks, console);

  auto logger = metrics::make_metrics_logger(args, &console);
  auto tokenizer = load_run_tokenizer(models);
  auto trainer = make_trainer(args, options, models, ranks.groups, console);
  // Rank 0 alone owns the data, the rollout and the metrics.
  Controller rank0(args, options, async, models, ranks.groups, *trainer, *tokenizer, *logger,
                   console);
  if (options.eval_interval && rank0.start_rollout_id() == 0 && options.eval_before_train)
    rank0.eval(0);
  console << "vime train: " << rank0.describe() << "\n";
  auto run_bar =
      metrics::console_progress("run", "rollouts", rank0.num_rollout() - rank0.start_rollout_id());
  for (int64_t rollout_id = rank0.start_rollout_id(); rollout_id < rank0.num_rollout();
       ++rollout_id) {
    // 1. Generate (or take the rollout generated ahead).
    const auto rollout = rank0.generate(rollout_id);
    if (options.rollout_only) {
      rank0.skip_training(rollout_id);
    } else {
      // 2. Train, 3. save when periodic, 4. update the engines' weights: every rank, on this order.
      auto order = rank0.order(rollout_id, rollout);
      run_step(*trainer, rank0.backend(), options, order, rank0);
      rank0.log_step(order);
      // 5. Eval when periodic.
      if (rank0.evaluates_after(rollout_id)) rank0.eval(rollout_id);
    }
    run_bar->advance();
  }
  run_bar->finish();
  rank0.finish();
  console << "vime train: done\n";
  return 0;
}

}  // namespace vime::loop
