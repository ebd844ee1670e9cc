#include "vime/loop/train_loop_options.hpp"

#include "vime/core/args_lookup.hpp"
#include "vime/core/flag_registry.hpp"
#include "vime/error.hpp"

namespace vime::loop {

CiCheckOptions CiCheckOptions::from(const Args& args) {
  CiCheckOptions o;
  o.enabled = args.get_bool("ci_test");
  o.check_kl = !args.get_bool("ci_disable_kl_checker");
  o.train_rollout_logprob_abs_diff_threshold =
      args.get_double("ci_train_rollout_logprob_abs_diff_threshold");
  return o;
}

TrainLoopOptions TrainLoopOptions::from(const Args& args) {
  TrainLoopOptions o;
  o.seed = args.get_int("seed");
  o.rollout_only = args.get_bool("debug_rollout_only");
  if (!o.rollout_only && args.get_double("rollout_top_p") < 1.0) {
    throw UsageError("--rollout-top-p " + core::display_value(args.get("rollout_top_p")) +
                     " is not supported yet for training: slime's trainer replays the engine's "
                     "top-p mask in its log-probs, vime's does not (use --rollout-top-p 1, or "
                     "--debug-rollout-only)");
  }
  o.train_critic = args.get_string("advantage_estimator") == "ppo";
  o.num_critic_only_steps = args.get_int("num_critic_only_steps");
  o.reset_optimizer_states = args.get_bool("reset_optimizer_states");
  o.ref_update_interval = args.get_optional_int("ref_update_interval");
  o.needs_reference_model =
      args.get_string("loss_type") != "sft_loss" &&
      (args.get_double("kl_coef") != 0 || args.get_bool("use_kl_loss") || args.get_bool("ci_test"));
  o.num_rollout = args.get_optional_int("num_rollout");
  o.num_epoch = args.get_optional_int("num_epoch");
  o.rollout_batch_size = args.get_optional_int("rollout_batch_size");
  o.start_rollout_id = args.get_optional_int("start_rollout_id");
  o.eval_interval = args.get_optional_int("eval_interval");
  o.eval_before_train = !args.get_bool("skip_eval_before_train");
  if (args.is_set("save")) o.save = args.get_string("save");
  o.save_interval = args.get_optional_int("save_interval");
  o.save_optimizer = !args.get_bool("no_save_optim");
  o.save_rng = !args.get_bool("no_save_rng");
  o.save_hf = args.get_optional_string("save_hf");
  o.ci = CiCheckOptions::from(args);
  o.offload_train = core::flag_on(args, "offload_train");
  o.distributed_timeout_minutes = args.get_int("distributed_timeout_minutes");
  o.distributed_backend = args.get_string("distributed_backend");
  return o;
}

}  // namespace vime::loop
