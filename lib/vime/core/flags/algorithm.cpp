// RL algorithm: advantage estimators, losses, clipping, KL, importance-sampling corrections,
// routing replay and on-policy distillation. slime: utils/arguments.py, utils/ppo_utils.py.
#include "vime/core/flags/flag_groups.hpp"

namespace vime::core::flags {
namespace {
using enum FlagKind;
using enum Support;
constexpr FlagSpec kFlags[] = {
    {"--advantage-estimator", kString, "grpo",
     "Advantage estimator; ppo adds a critic trained alongside the actor.", kYes,
     "grpo|gspo|cispo|reinforce_plus_plus|reinforce_plus_plus_baseline|ppo"},
    {"--loss-type", kString, "policy_loss",
     "Actor loss: the PPO-style policy loss, SFT cross-entropy, or --custom-loss-function-path.",
     kYes, "policy_loss|sft_loss|custom_loss"},
    {"--custom-loss-function-path",
     kString,
     nullptr,
     "Plugin: path/to/lib.so[:symbol]. Computes the loss of a micro-batch for --loss-type "
     "custom_loss.",
     kYes,
     {},
     {},
     "--loss-plugin"},
    {"--pg-loss-type", kString, nullptr,
     "Policy-gradient objective (unset: reinforce with --use-score-centering, else ppo).", kNotYet,
     "ppo|reinforce"},
    {"--use-score-centering", kStoreTrue, nullptr,
     "REINFORCE with score centering over the sampler's top tokens (exact under top-p replay).",
     kNotYet},
    {"--score-centering-top-k", kInt, "128",
     "Sampler top log-probs kept for score centering when --rollout-top-p is 1.", kNotYet},
    {"--eps-clip", kFloat, "0.2", "PPO ratio clip range (lower side, and upper when unset)."},
    {"--eps-clip-high", kFloat, nullptr, "Upper PPO ratio clip range (unset: --eps-clip)."},
    {"--eps-clip-c", kFloat, nullptr,
     "Dual-clip PPO bound c (> 1) on the loss for negative advantages (unset: off)."},
    {"--value-clip", kFloat, "0.2", "Clip range of the critic's value loss."},
    {"--kl-coef", kFloat, "0.0",
     "Per-token KL(old || ref) penalty in the reward, for the ppo and reinforce_plus_plus "
     "estimators (needs --ref-load; exclusive with --kl-loss-coef)."},
    {"--use-kl-loss", kStoreTrue, nullptr,
     "Add a KL(actor || ref) term to the loss (needs --ref-load)."},
    {"--kl-loss-coef", kFloat, "0.0", "Weight of the KL loss term."},
    {"--kl-loss-type", kString, "k1", "KL estimator for the KL loss and KL metrics.", kYes,
     "k1|k2|k3|low_var_kl"},
    {"--use-unbiased-kl", kStoreTrue, nullptr,
     "Weight the KL estimate by the actor/old-policy ratio to make it unbiased."},
    {"--ref-update-interval", kInt, nullptr,
     "Copy the actor's weights into the reference model every N rollouts (unset: never)."},
    {"--entropy-coef", kFloat, "0.0", "Weight of the entropy bonus in the policy loss."},
    {"--gamma", kFloat, "1.0", "Discount factor for returns and GAE."},
    {"--lambd", kFloat, "1.0", "GAE lambda."},
    {"--normalize-advantages", kStoreTrue, nullptr,
     "Whiten advantages over the batch (required by the reinforce_plus_plus estimators)."},
    {"--disable-grpo-std-normalization",
     kStoreFalse,
     nullptr,
     "GRPO: subtract the group mean without dividing by the group std (Dr. GRPO).",
     kYes,
     {},
     "grpo_std_normalization"},
    {"--disable-rewards-normalization",
     kStoreFalse,
     nullptr,
     "Skip group reward normalization and use raw rewards.",
     kYes,
     {},
     "rewards_normalization"},
    {"--disable-compute-advantages-and-returns",
     kStoreFalse,
     nullptr,
     "Do not compute advantages and returns (for SFT or custom losses).",
     kYes,
     {},
     "compute_advantages_and_returns"},
    {"--custom-advantage-function-path",
     kString,
     nullptr,
     "Plugin: path/to/lib.so[:symbol]. Sets advantages and returns in place of the estimator "
     "(OPD and normalization still run after it).",
     kYes,
     {},
     {},
     "--advantage-plugin"},
    {"--use-rollout-entropy", kStoreTrue, nullptr,
     "Also compute token entropy in the actor and reference log-prob passes (for entropy-based "
     "masks). Not supported yet: the log-prob passes keep no per-token entropy; compute it from "
     "the logits in a --custom-loss-function-path plugin.",
     kNotYet},
    {"--get-mismatch-metrics", kStoreTrue, nullptr,
     "Log train-vs-rollout log-prob mismatch metrics (through the TIS function)."},
    {"--use-rollout-logprobs", kStoreTrue, nullptr,
     "Use the engine's rollout log-probs as the old policy in the ratio instead of recomputing "
     "them (exclusive with --use-tis)."},
    {"--use-tis", kStoreTrue, nullptr,
     "Truncated importance sampling: weight the policy loss by the clipped train/rollout "
     "probability ratio."},
    {"--tis-clip", kFloat, "2.0", "Upper clip of the TIS ratio."},
    {"--tis-clip-low", kFloat, "0", "Lower clip of the TIS ratio."},
    {"--custom-tis-function-path",
     kString,
     nullptr,
     "Plugin: path/to/lib.so[:symbol]. Computes the importance weights, masks and mismatch "
     "metrics for --use-tis and --get-mismatch-metrics.",
     kYes,
     {},
     {},
     "--tis-plugin"},
    {"--custom-pg-loss-reducer-function-path", kString, nullptr,
     "Plugin: path/to/lib.so[:symbol]. Reduces the per-token policy-gradient loss (e.g. Dr. GRPO "
     "constant normalization); other metrics keep the default mean."},
    {"--use-opsm", kStoreTrue, nullptr,
     "Off-policy sequence masking: drop negative-advantage tokens of sequences whose mean "
     "log-prob drift from the old policy exceeds --opsm-delta."},
    {"--opsm-delta", kFloat, "1e-4", "Drift threshold of off-policy sequence masking."},
    {"--use-routing-replay", kStoreTrue, nullptr,
     "MoE routing replay: the training forwards reuse the experts each token was routed to in "
     "the old-policy log-prob forward (the reference forward routes freely)."},
    {"--use-rollout-routing-replay", kStoreTrue, nullptr,
     "Replay the rollout engine's expert routing (returned as routed_experts) in the old-policy "
     "and training forwards (implies --use-routing-replay). Engines start with "
     "--enable-return-routed-experts."},
    {"--routing-replay-prefetch-microbatches", kInt, "1",
     "Disk-backed routing-replay micro-batches slime prefetches into CPU memory.", kNoEffect},
    {"--reset-optimizer-states", kStoreTrue, nullptr,
     "Clear the optimizer state after every rollout."},
    {"--use-stateless-adam", kStoreTrue, nullptr,
     "Adam whose moments are not carried across steps. Not supported yet; --reset-optimizer-states "
     "clears the moments after every rollout.",
     kNotYet},
    {"--use-opd", kStoreTrue, nullptr,
     "On-policy distillation: advantages -= --opd-kl-coef x (student - teacher log-prob) after the "
     "estimator (needs --opd-type)."},
    {"--opd-type", kString, nullptr,
     "Where the teacher log-probs come from: megatron, a teacher checkpoint in the trainer "
     "(--opd-teacher-load); vllm (sglang is slime's name for it), a served teacher: "
     "--opd-teacher-model, or else the samples' teacher_log_probs that a rollout plugin sets.",
     kYes, "vllm|megatron|sglang"},
    {"--opd-kl-coef", kFloat, "1.0", "Weight of the on-policy distillation KL penalty."},
    {"--opd-teacher-load", kString, nullptr,
     "Teacher checkpoint or HF directory for --opd-type megatron (same tokenizer as the actor)."},
    {"--opd-teacher-ckpt-step", kInt, nullptr,
     "Iteration of --opd-teacher-load to read (unset: the latest)."},
    {"--opd-teacher-model", kString, nullptr,
     "The served teacher of --opd-type vllm/sglang: a model name of --vllm-config (its router, "
     "else its engines) or an engine URL (http://host:port: a vime serve or vllm serve of a "
     "model with the actor's tokenizer). After each rollout, vime sends every sample's tokens to "
     "its /v1/completions with prompt_logprobs=0 at --rollout-temperature and keeps the last "
     "response_length log-probs as the sample's teacher_log_probs (slime's "
     "on_policy_distillation); timed as perf/teacher_log_probs_time."},
};
}  // namespace
FlagGroup algorithm() { return {"algorithm", "RL algorithm", kFlags}; }
}  // namespace vime::core::flags
