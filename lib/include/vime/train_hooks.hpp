// Hooks of the trainer, whose signatures take tensors. Including this header needs
// LibTorch's ATen headers (find_package(Torch) in the plugin's CMake); plugins of the other kinds
// need only hooks.hpp. Every hook here runs on the trainer's (controller) thread, one call at a
// time, while the rollout engine is paused.
#pragma once

#include <ATen/core/Tensor.h>

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "vime/hooks.hpp"

namespace vime {

class Model;        // the trainer's model (lib/vime/model)
class Optimizer;    // the trainer's optimizer (lib/vime/train)
class LrScheduler;  // the trainer's learning-rate schedule (lib/vime/train)

// slime's rollout_data: per-sample tensors by key ("tokens", "log_probs", "ref_log_probs",
// "advantages", "returns", "kl", "values", "loss_masks", ...). Response-level keys hold
// [response_length] tensors.
using RolloutData = std::map<std::string, std::vector<at::Tensor>>;

// Σ_i Σ_t x·m / max(rollout_mask_sums_i, 1) over the micro-batch (or Σ x·m with
// --calculate-per-token-loss).
using SumOfSampleMean = std::function<at::Tensor(const at::Tensor& per_token_values)>;

struct LossOutput {
  at::Tensor loss;                            // scalar
  std::map<std::string, at::Tensor> metrics;  // logged as train/{name}
};

struct TisInputs {
  at::Tensor pg_loss;                         // [total_response_tokens]
  std::vector<at::Tensor> train_log_probs;    // per sample [response_length]
  std::vector<at::Tensor> rollout_log_probs;  // per sample [response_length]
  std::vector<at::Tensor> loss_masks;         // per sample [response_length]
  std::vector<int64_t> total_lengths;
  std::vector<int64_t> response_lengths;
};

struct TisOutput {
  at::Tensor pg_loss;                  // [total_response_tokens], reweighted
  std::vector<at::Tensor> loss_masks;  // per sample, possibly with tokens masked out
  std::map<std::string, std::vector<at::Tensor>> metrics;  // per-token metrics by name
};

// --rollout-data-postprocess-path (default symbol: rollout_data_postprocess): after log-probs and
// advantages, before the train steps.
using RolloutDataPostprocessFn = void(const Args& args, int64_t rollout_id,
                                      RolloutData& rollout_data);
// --custom-loss-function-path with --loss-type custom_loss (default symbol: loss): each
// micro-batch. logits: [total_tokens, vocab] of the packed micro-batch.
using LossFn = LossOutput(const Args& args, const RolloutData& batch, const at::Tensor& logits,
                          const SumOfSampleMean& sum_of_sample_mean);
// --custom-advantage-function-path (default symbol: compute_advantages): sets "advantages" and
// "returns".
using AdvantageFn = void(const Args& args, RolloutData& rollout_data);
// --custom-tis-function-path (default symbol: tis), with --use-tis or --get-mismatch-metrics.
using TisFn = TisOutput(const Args& args, const TisInputs& inputs);
// --custom-pg-loss-reducer-function-path (default symbol: pg_loss_reducer): returns the reducer of
// pg_loss.
using PgLossReducerFn = SumOfSampleMean(const std::vector<int64_t>& total_lengths,
                                        const std::vector<int64_t>& response_lengths,
                                        const std::vector<at::Tensor>& loss_masks,
                                        bool calculate_per_token_loss);
// --custom-megatron-before-log-prob-hook-path (default symbol: before_log_prob); store_prefix is
// "", "ref_" or "teacher_".
using BeforeLogProbHookFn = void(const Args& args, Model& model, std::string_view store_prefix);
// --custom-megatron-before-train-step-hook-path (default symbol: before_train_step): each optimizer
// step.
using BeforeTrainStepHookFn = void(const Args& args, int64_t rollout_id, int64_t step_id,
                                   Model& model, Optimizer& optimizer, LrScheduler& lr_scheduler);
// --custom-model-provider-path (default symbol: model_provider).
using ModelProviderFn = std::shared_ptr<Model>(const Args& args, bool pre_process,
                                               bool post_process);

template <>
struct PluginSignature<PluginKind::kRolloutDataPostprocess> {
  using type = RolloutDataPostprocessFn;
};
template <>
struct PluginSignature<PluginKind::kLoss> {
  using type = LossFn;
};
template <>
struct PluginSignature<PluginKind::kAdvantage> {
  using type = AdvantageFn;
};
template <>
struct PluginSignature<PluginKind::kTis> {
  using type = TisFn;
};
template <>
struct PluginSignature<PluginKind::kPgLossReducer> {
  using type = PgLossReducerFn;
};
template <>
struct PluginSignature<PluginKind::kBeforeLogProbHook> {
  using type = BeforeLogProbHookFn;
};
template <>
struct PluginSignature<PluginKind::kBeforeTrainStepHook> {
  using type = BeforeTrainStepHookFn;
};
template <>
struct PluginSignature<PluginKind::kModelProvider> {
  using type = ModelProviderFn;
};

}  // namespace vime

#define VIME_ROLLOUT_DATA_POSTPROCESS_PLUGIN(fn) \
  VIME_EXPORT_PLUGIN(::vime::PluginKind::kRolloutDataPostprocess, fn)
#define VIME_LOSS_PLUGIN(fn) VIME_EXPORT_PLUGIN(::vime::PluginKind::kLoss, fn)
#define VIME_ADVANTAGE_PLUGIN(fn) VIME_EXPORT_PLUGIN(::vime::PluginKind::kAdvantage, fn)
#define VIME_TIS_PLUGIN(fn) VIME_EXPORT_PLUGIN(::vime::PluginKind::kTis, fn)
#define VIME_PG_LOSS_REDUCER_PLUGIN(fn) VIME_EXPORT_PLUGIN(::vime::PluginKind::kPgLossReducer, fn)
#define VIME_BEFORE_LOG_PROB_HOOK_PLUGIN(fn) \
  VIME_EXPORT_PLUGIN(::vime::PluginKind::kBeforeLogProbHook, fn)
#define VIME_BEFORE_TRAIN_STEP_HOOK_PLUGIN(fn) \
  VIME_EXPORT_PLUGIN(::vime::PluginKind::kBeforeTrainStepHook, fn)
#define VIME_MODEL_PROVIDER_PLUGIN(fn) VIME_EXPORT_PLUGIN(::vime::PluginKind::kModelProvider, fn)
