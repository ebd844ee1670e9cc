// The loop's options builders: each reads its flags (registered keys, their defaults) into the
// typed fields the train loop, `vime eval` and the rollout backends use.
#include <ATen/ATen.h>  // before Catch: glog's CHECK must lose to Catch's

#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "vime/core/arg_parser.hpp"
#include "vime/error.hpp"
#include "vime/loop/eval_run_options.hpp"
#include "vime/loop/rollout_backend_options.hpp"
#include "vime/loop/run_models_options.hpp"
#include "vime/loop/train_loop_options.hpp"
#include "vime/loop/vllm_backend_options.hpp"

using Strings = std::vector<std::string>;

namespace {
vime::Args parse(Strings tokens) { return vime::core::parse_args(tokens); }
}  // namespace

TEST_CASE("train loop options: defaults and flags", "[loop]") {
  const auto defaults = vime::loop::TrainLoopOptions::from(parse({}));
  CHECK(defaults.seed == 1234);
  CHECK_FALSE(defaults.rollout_only);
  CHECK_FALSE(defaults.train_critic);
  CHECK_FALSE(defaults.needs_reference_model);
  CHECK_FALSE(defaults.num_rollout.has_value());
  CHECK_FALSE(defaults.save.has_value());
  CHECK(defaults.eval_before_train);
  CHECK(defaults.save_optimizer);
  CHECK(defaults.save_rng);
  CHECK_FALSE(defaults.ci.enabled);
  CHECK(defaults.ci.check_kl);
  CHECK(defaults.ci.train_rollout_logprob_abs_diff_threshold == 0.1);

  const auto o = vime::loop::TrainLoopOptions::from(parse({"--seed",
                                                           "7",
                                                           "--advantage-estimator",
                                                           "ppo",
                                                           "--rollout-batch-size",
                                                           "4",
                                                           "--num-epoch",
                                                           "2",
                                                           "--start-rollout-id",
                                                           "3",
                                                           "--eval-interval",
                                                           "5",
                                                           "--skip-eval-before-train",
                                                           "--save",
                                                           "/ckpt",
                                                           "--save-interval",
                                                           "6",
                                                           "--no-save-optim",
                                                           "--no-save-rng",
                                                           "--kl-coef",
                                                           "0.1",
                                                           "--ci-test",
                                                           "--ci-disable-kl-checker",
                                                           "--debug-rollout-only"}));
  CHECK(o.seed == 7);
  CHECK(o.train_critic);
  CHECK(o.rollout_only);
  CHECK(o.needs_reference_model);
  CHECK(o.rollout_batch_size == 4);
  CHECK(o.num_epoch == 2);
  CHECK(o.start_rollout_id == 3);
  CHECK(o.eval_interval == 5);
  CHECK_FALSE(o.eval_before_train);
  CHECK(o.save == "/ckpt");
  CHECK(o.save_interval == 6);
  CHECK_FALSE(o.save_optimizer);
  CHECK_FALSE(o.save_rng);
  CHECK(o.ci.enabled);
  CHECK_FALSE(o.ci.check_kl);
  // SFT reads no reference log-probs, whatever asks for them.
  CHECK_FALSE(vime::loop::TrainLoopOptions::from(
                  parse({"--loss-type", "sft_loss", "--use-kl-loss", "--ci-test"}))
                  .needs_reference_model);
}

TEST_CASE("run models and eval options: precision, checkpoints, --eval-output", "[loop]") {
  const auto defaults = vime::loop::RunModelsOptions::from(parse({}));
  CHECK(defaults.dtype == at::kFloat);
  CHECK_FALSE(defaults.hf_checkpoint.has_value());
  CHECK_FALSE(defaults.load.has_value());
  const auto o = vime::loop::RunModelsOptions::from(
      parse({"--bf16", "--hf-checkpoint", "/hf", "--load", "/run", "--ckpt-step", "3", "--ref-load",
             "/ref", "--ref-ckpt-step", "2"}));
  CHECK(o.dtype == at::kBFloat16);
  CHECK(o.hf_checkpoint == "/hf");
  CHECK(o.load == "/run");
  CHECK(o.ckpt_step == 3);
  CHECK(o.ref_load == "/ref");
  CHECK(o.ref_ckpt_step == 2);
  // --ref-load defaults to --hf-checkpoint.
  CHECK(vime::loop::RunModelsOptions::from(
            vime::loop::with_run_defaults(parse({"--hf-checkpoint", "/hf"})))
            .ref_load == "/hf");

  CHECK_FALSE(vime::loop::EvalRunOptions::from(parse({})).output.has_value());
  CHECK(vime::loop::EvalRunOptions::from(parse({"--eval-output", "/e.jsonl"})).output ==
        "/e.jsonl");
}

TEST_CASE("rollout backend options: which backend, and the vLLM backend's flags", "[loop]") {
  using vime::loop::RolloutBackendKind;
  using vime::loop::RolloutBackendOptions;
  CHECK(RolloutBackendOptions::from(parse({})).kind == RolloutBackendKind::kNative);
  CHECK(RolloutBackendOptions::from(parse({"--vllm-config", "x.yaml"})).kind ==
        RolloutBackendKind::kVllm);
  CHECK(RolloutBackendOptions::from(parse({"--rollout-external-engine-addrs", "h:1"})).kind ==
        RolloutBackendKind::kVllm);
  CHECK(RolloutBackendOptions::from(
            parse({"--vllm-router-ip", "h", "--vllm-router-port", "1", "--rollout-num-gpus", "1"}))
            .kind == RolloutBackendKind::kVllm);
  // A --vllm-* engine flag alone chooses vLLM too, and the options say which flag did.
  const auto by_flag =
      RolloutBackendOptions::from(parse({"--vllm-gpu-memory-utilization", "0.5", "--colocate"}));
  CHECK(by_flag.kind == RolloutBackendKind::kVllm);
  CHECK(by_flag.vllm_chosen_by_flag == "--vllm-gpu-memory-utilization");
  CHECK(RolloutBackendOptions::from(parse({"--vllm-gpu-memory-utilization", "0.5", "--colocate",
                                           "--rollout-backend", "vllm"}))
            .vllm_chosen_by_flag.empty());
  // The vLLM backend with no engine to start or use is refused, naming the flag that chose it.
  CHECK_THROWS_AS(RolloutBackendOptions::from(parse({"--vllm-gpu-memory-utilization", "0.5"})),
                  vime::UsageError);
  CHECK_THROWS_WITH(
      RolloutBackendOptions::from(parse({"--vllm-gpu-memory-utilization", "0.5"})),
      Catch::StartsWith(
          "the vLLM backend (chosen by --vllm-gpu-memory-utilization) has no engine") &&
          Catch::Contains("--rollout-gpu-memory-utilization"));
  CHECK_THROWS_WITH(
      RolloutBackendOptions::from(parse({"--vllm-router-ip", "h", "--vllm-router-port", "1"})),
      Catch::Contains("chosen by --vllm-router-ip") &&
          !Catch::Contains("--rollout-gpu-memory-utilization"));
  CHECK(RolloutBackendOptions::from(parse({"--rollout-backend", "native", "--vllm-config", "x"}))
            .kind == RolloutBackendKind::kNative);

  const auto defaults = vime::loop::VllmBackendOptions::from(parse({}));
  CHECK(defaults.launch.engines.weight_transport == vime::launch::WeightTransport::kNccl);
  CHECK(defaults.weight_transfer_timeout_s == 900);
  CHECK(defaults.external_engine_timeout_s == 30);
  CHECK(defaults.packed);
  CHECK(defaults.packed_buffer_size_bytes == 536870912);
  CHECK_FALSE(defaults.disk_dir.has_value());
  CHECK_FALSE(defaults.use_fault_tolerance);
  CHECK(defaults.health.interval_s == 30);
  CHECK(defaults.engine.concurrency_per_worker == 512);
  const auto o = vime::loop::VllmBackendOptions::from(
      parse({"--update-weight-transport", "disk", "--update-weight-disk-dir", "/w",
             "--update-weight-disk-keep-files", "--no-vllm-weight-sync-packed",
             "--use-fault-tolerance", "--rollout-health-check-timeout", "5", "--colocate"}));
  CHECK(o.launch.engines.weight_transport == vime::launch::WeightTransport::kDisk);
  CHECK(o.launch.engines.engines_sleep_while_training());
  CHECK(o.disk_dir == "/w");
  CHECK(o.keep_disk_files);
  CHECK_FALSE(o.packed);
  CHECK(o.use_fault_tolerance);
  CHECK(o.external_engine_timeout_s == 5);
  CHECK(o.health.timeout_s == 5);
}
