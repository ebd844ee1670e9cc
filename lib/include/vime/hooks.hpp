// The C++ signature of every customization hook of slime that needs no tensors, and the
// macro that exports a function as that hook. Tensor hooks (loss, advantages, TIS, ...) are in
// train_hooks.hpp. A hook may throw vime::Error to fail its sample (per-sample hooks) or the run.
//
// Threads. Per-sample hooks (generate, sample hook, reward, group reward) run on the rollout worker
// pool, MANY AT ONCE (up to --vllm-server-concurrency per engine, at most 256 threads): they must
// be thread-safe, and vime never serialises them. Every other hook here runs on the controller
// thread, one call at a time, as noted on each.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "vime/args.hpp"
#include "vime/engine_client.hpp"
#include "vime/error.hpp"
#include "vime/generate_context.hpp"
#include "vime/json.hpp"
#include "vime/plugin.hpp"
#include "vime/rollout_context.hpp"
#include "vime/rollout_types.hpp"
#include "vime/sample.hpp"
#include "vime/sampling_params.hpp"
#include "vime/tokenizer.hpp"

namespace vime {

using RolloutFnOutput = std::variant<RolloutFnTrainOutput, RolloutFnEvalOutput>;

struct RewardPostProcessOutput {
  std::vector<double> raw_rewards;
  std::vector<double> rewards;
};

// --rollout-function-path / --eval-function-path (default symbol: generate_rollout). Called once
// per rollout on the controller thread; returns RolloutFnEvalOutput when `evaluation`. `ctx` gives
// the args, the engine, the tokenizer and ctx.generate_groups (vime's default generate + reward).
using RolloutFn = RolloutFnOutput(RolloutContext& ctx, int64_t rollout_id, DataSource& data_source,
                                  bool evaluation);
// --custom-generate-function-path (default symbol: generate). Sets tokens (prompt + response),
// response_length, response, loss_mask (tool tokens 0), rollout_log_probs and status; a reward it
// sets skips the reward model. Worker pool, concurrently.
using GenerateFn = Sample(GenerateContext& ctx, Sample sample,
                          const SamplingParams& sampling_params);
// --rollout-sample-hook-path, repeatable (default symbol: sample_hook). Runs after generate and
// before the reward model on every sample; returning nullopt keeps the sample unchanged. Worker
// pool, concurrently.
using SampleHookFn = std::optional<Sample>(const Args& args, Sample sample,
                                           std::optional<int64_t> rollout_id, bool evaluation);
// --custom-rm-path (default symbol: reward). Returns a number, or an object read through
// --reward-key. Worker pool: called for many samples at once, so it must be thread-safe (also
// under `vime reward`, which grades a file on --workers threads).
using RewardFn = Json(const Args& args, const Sample& sample);
// --custom-rm-path with --group-rm (default symbol: group_reward): one reward per sample of the
// group. Worker pool, on the thread that finishes the group's last sample: different groups at
// once.
using GroupRewardFn = std::vector<Json>(const Args& args, const std::vector<Sample>& group);
// --dynamic-sampling-filter-path (default symbol: dynamic_filter). Called on each finished group,
// controller thread.
using DynamicFilterFn = DynamicFilterOutput(const Args& args, const std::vector<Sample>& group);
// --buffer-filter-path (default symbol: buffer_filter). Must remove from `buffer` what it returns.
// Controller thread.
using BufferFilterFn = std::vector<SampleGroup>(const Args& args, std::optional<int64_t> rollout_id,
                                                std::vector<SampleGroup>& buffer,
                                                int64_t num_groups);
// --rollout-sample-filter-path (default symbol: sample_filter). Sets remove_sample on samples to
// drop from the loss; they still count in reward normalisation. Controller thread.
using SampleFilterFn = void(const Args& args, std::vector<SampleGroup>& data);
// --rollout-all-samples-process-path (default symbol: all_samples_process). Sees filtered groups
// too. Controller thread.
using AllSamplesProcessFn = void(const Args& args, std::vector<SampleGroup>& all_groups,
                                 DataSource& data_source);
// --custom-reward-post-process-path (default symbol: reward_post_process). Replaces group
// normalisation. Controller thread.
using RewardPostProcessFn = RewardPostProcessOutput(const Args& args,
                                                    const std::vector<Sample>& samples);
// --custom-convert-samples-to-train-data-path (default symbol: convert_samples_to_train_data).
// Controller thread.
using ConvertSamplesFn = TrainData(const Args& args, const std::vector<Sample>& samples);
// --custom-rollout-log-function-path (default symbol: rollout_log). Returning true skips the
// default log. Controller thread.
using RolloutLogFn = bool(int64_t rollout_id, const Args& args, const std::vector<Sample>& samples,
                          const Metrics& extra_metrics, double rollout_time_s);
// --custom-eval-rollout-log-function-path (default symbol: eval_rollout_log). Controller thread.
using EvalRolloutLogFn = bool(int64_t rollout_id, const Args& args, const RolloutFnEvalOutput& data,
                              const Metrics& extra_metrics);
// --data-source-path (default symbol: data_source): builds the data source. The factory and the
// data source's methods are called on the controller thread.
using DataSourceFactoryFn = std::unique_ptr<DataSource>(const Args& args);
// --custom-megatron-init-path (default symbol: init): once, after the trainer is set up (before
// the rollout engines start), controller thread.
using InitHookFn = void(const Args& args);
// --custom-update-weight-post-write-path (default symbol: post_write): after disk weights are
// written, controller thread.
using UpdateWeightPostWriteFn = void(const Args& args, const std::string& version_dir,
                                     const std::vector<std::string>& engine_urls);

template <>
struct PluginSignature<PluginKind::kRollout> {
  using type = RolloutFn;
};
template <>
struct PluginSignature<PluginKind::kGenerate> {
  using type = GenerateFn;
};
template <>
struct PluginSignature<PluginKind::kSampleHook> {
  using type = SampleHookFn;
};
template <>
struct PluginSignature<PluginKind::kReward> {
  using type = RewardFn;
};
template <>
struct PluginSignature<PluginKind::kGroupReward> {
  using type = GroupRewardFn;
};
template <>
struct PluginSignature<PluginKind::kDynamicFilter> {
  using type = DynamicFilterFn;
};
template <>
struct PluginSignature<PluginKind::kBufferFilter> {
  using type = BufferFilterFn;
};
template <>
struct PluginSignature<PluginKind::kSampleFilter> {
  using type = SampleFilterFn;
};
template <>
struct PluginSignature<PluginKind::kAllSamplesProcess> {
  using type = AllSamplesProcessFn;
};
template <>
struct PluginSignature<PluginKind::kRewardPostProcess> {
  using type = RewardPostProcessFn;
};
template <>
struct PluginSignature<PluginKind::kConvertSamples> {
  using type = ConvertSamplesFn;
};
template <>
struct PluginSignature<PluginKind::kRolloutLog> {
  using type = RolloutLogFn;
};
template <>
struct PluginSignature<PluginKind::kEvalRolloutLog> {
  using type = EvalRolloutLogFn;
};
template <>
struct PluginSignature<PluginKind::kDataSource> {
  using type = DataSourceFactoryFn;
};
template <>
struct PluginSignature<PluginKind::kInitHook> {
  using type = InitHookFn;
};
template <>
struct PluginSignature<PluginKind::kUpdateWeightPostWrite> {
  using type = UpdateWeightPostWriteFn;
};

}  // namespace vime

#define VIME_ROLLOUT_PLUGIN(fn) VIME_EXPORT_PLUGIN(::vime::PluginKind::kRollout, fn)
#define VIME_GENERATE_PLUGIN(fn) VIME_EXPORT_PLUGIN(::vime::PluginKind::kGenerate, fn)
#define VIME_SAMPLE_HOOK_PLUGIN(fn) VIME_EXPORT_PLUGIN(::vime::PluginKind::kSampleHook, fn)
#define VIME_REWARD_PLUGIN(fn) VIME_EXPORT_PLUGIN(::vime::PluginKind::kReward, fn)
#define VIME_GROUP_REWARD_PLUGIN(fn) VIME_EXPORT_PLUGIN(::vime::PluginKind::kGroupReward, fn)
#define VIME_DYNAMIC_FILTER_PLUGIN(fn) VIME_EXPORT_PLUGIN(::vime::PluginKind::kDynamicFilter, fn)
#define VIME_BUFFER_FILTER_PLUGIN(fn) VIME_EXPORT_PLUGIN(::vime::PluginKind::kBufferFilter, fn)
#define VIME_SAMPLE_FILTER_PLUGIN(fn) VIME_EXPORT_PLUGIN(::vime::PluginKind::kSampleFilter, fn)
#define VIME_ALL_SAMPLES_PROCESS_PLUGIN(fn) \
  VIME_EXPORT_PLUGIN(::vime::PluginKind::kAllSamplesProcess, fn)
#define VIME_REWARD_POST_PROCESS_PLUGIN(fn) \
  VIME_EXPORT_PLUGIN(::vime::PluginKind::kRewardPostProcess, fn)
#define VIME_CONVERT_SAMPLES_PLUGIN(fn) VIME_EXPORT_PLUGIN(::vime::PluginKind::kConvertSamples, fn)
#define VIME_ROLLOUT_LOG_PLUGIN(fn) VIME_EXPORT_PLUGIN(::vime::PluginKind::kRolloutLog, fn)
#define VIME_EVAL_ROLLOUT_LOG_PLUGIN(fn) VIME_EXPORT_PLUGIN(::vime::PluginKind::kEvalRolloutLog, fn)
#define VIME_DATA_SOURCE_PLUGIN(fn) VIME_EXPORT_PLUGIN(::vime::PluginKind::kDataSource, fn)
#define VIME_INIT_HOOK_PLUGIN(fn) VIME_EXPORT_PLUGIN(::vime::PluginKind::kInitHook, fn)
#define VIME_UPDATE_WEIGHT_POST_WRITE_PLUGIN(fn) \
  VIME_EXPORT_PLUGIN(::vime::PluginKind::kUpdateWeightPostWrite, fn)
