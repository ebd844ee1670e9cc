// The flags `vime train`'s loop reads (run_training), once: how long to run, when to save and
// evaluate, what to train, and the --ci-test invariants.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "vime/args.hpp"

namespace vime::loop {

// slime's --ci-test checks (ci_checks.hpp).
struct CiCheckOptions {
  bool enabled = false;  // --ci-test
  bool check_kl = true;  // not --ci-disable-kl-checker
  double train_rollout_logprob_abs_diff_threshold = 0.1;

  static CiCheckOptions from(const Args& args);
};

struct TrainLoopOptions {
  int64_t seed = 1234;
  bool rollout_only = false;            // --debug-rollout-only
  bool train_critic = false;            // --advantage-estimator ppo: a critic trains with the actor
  int64_t num_critic_only_steps = 0;    // with a critic, the actor trains from this rollout on
  bool reset_optimizer_states = false;  // Adam starts afresh before each rollout's training
  std::optional<int64_t> ref_update_interval;  // the reference takes the actor's weights every N
  // A KL term (--kl-coef, --use-kl-loss) or --ci-test reads reference log-probs; never under
  // --loss-type sft_loss.
  bool needs_reference_model = false;

  // Length: --num-rollout, else --num-epoch x (prompts // --rollout-batch-size).
  std::optional<int64_t> num_rollout;
  std::optional<int64_t> num_epoch;
  std::optional<int64_t> rollout_batch_size;
  // Unset: the loaded checkpoint's iteration + 1, or 0.
  std::optional<int64_t> start_rollout_id;

  std::optional<int64_t> eval_interval;  // unset: never
  bool eval_before_train = true;         // not --skip-eval-before-train

  std::optional<std::string> save;  // checkpoint directory; unset: never saved
  std::optional<int64_t> save_interval;
  bool save_optimizer = true;  // not --no-save-optim
  bool save_rng = true;        // not --no-save-rng
  // --save-hf: an HF directory of the actor at each save ({rollout_id} filled in).
  std::optional<std::string> save_hf;

  CiCheckOptions ci;

  // --offload-train: the optimizer's state waits in host memory while the rollout runs.
  bool offload_train = false;

  // Rendezvous and collective timeout between the trainer's ranks (--distributed-timeout-minutes).
  int64_t distributed_timeout_minutes = 10;
  std::string distributed_backend =
      "nccl";  // --distributed-backend: CUDA ranks; CPU ranks use Gloo

  static TrainLoopOptions from(const Args& args);
};

}  // namespace vime::loop
