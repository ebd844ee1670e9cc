// The rollout flags of a run, read once: RolloutManager builds them and hands them to its parts
// (the group generator, the default train and eval rollouts, the plugin loaders).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "vime/args.hpp"

namespace vime::rollout {

// Group reward normalisation (slime's _post_process_rewards), with the estimator already mapped
// to what it asks for.
struct RewardPostProcessOptions {
  // Mean-centre each group: --advantage-estimator grpo, gspo, cispo or
  // reinforce_plus_plus_baseline, unless --disable-rewards-normalization.
  bool normalize = false;
  // Then divide by the group's std: grpo, gspo and cispo, unless --disable-grpo-std-normalization.
  bool divide_by_std = false;
  int64_t n_samples_per_prompt = 1;           // --n-samples-per-prompt: the group size
  std::optional<int64_t> rollout_batch_size;  // --rollout-batch-size
  std::optional<std::string> custom_path;     // --custom-reward-post-process-path

  static RewardPostProcessOptions from(const Args& args);
};

// The derived (not a flag) arg behind RolloutOptions::seed_each_sample.
inline constexpr const char* kSeedEachSampleArg = "rollout_seed_each_sample";

// --use-opd --opd-type vllm|sglang --opd-teacher-model: where the served teacher is and how to
// ask it (opd_teacher.hpp).
struct OpdTeacherOptions {
  std::string model;  // --opd-teacher-model as given: a --vllm-config model name or a URL
  // Where its requests go: the URL, else the model's router, else its engines (from the derived
  // arg vllm_model_urls), in turn.
  std::vector<std::string> urls;
  double temperature = 1.0;   // --rollout-temperature
  double timeout_s = 0;       // --router-request-timeout-secs, per request
  int64_t max_in_flight = 1;  // --vllm-server-concurrency per URL
  std::string api_key;        // --vllm-api-key / --router-api-key, when given

  // nullopt unless --use-opd --opd-type vllm|sglang --opd-teacher-model NAME. Throws UsageError
  // naming the flag when NAME is no URL and no model of the run's --vllm-config.
  static std::optional<OpdTeacherOptions> from(const Args& args);
};

struct RolloutOptions {
  // Sampling of train rollouts (rollout_sampling_params) and the fallback of eval datasets.
  double temperature = 1.0;                 // --rollout-temperature
  double top_p = 1.0;                       // --rollout-top-p
  int64_t top_k = -1;                       // --rollout-top-k
  std::optional<int64_t> max_response_len;  // --rollout-max-response-len
  std::vector<std::string> stop;            // --rollout-stop
  std::vector<int64_t> stop_token_ids;      // --rollout-stop-token-ids
  bool skip_special_tokens = false;         // --rollout-skip-special-tokens
  // What the context of an --eval-function-path plugin changes of the above.
  std::optional<double> eval_temperature;        // --eval-temperature
  std::optional<double> eval_top_p;              // --eval-top-p
  std::optional<int64_t> eval_top_k;             // --eval-top-k
  std::optional<int64_t> eval_max_response_len;  // --eval-max-response-len

  // The train rollout.
  std::optional<int64_t> rollout_batch_size;        // --rollout-batch-size; see batch_size()
  std::optional<int64_t> over_sampling_batch_size;  // --over-sampling-batch-size
  int64_t n_samples_per_prompt = 1;                 // --n-samples-per-prompt
  bool partial_rollout = false;                     // --partial-rollout
  std::optional<int64_t> max_staleness;             // --max-staleness (fully async rollout)
  bool mask_offpolicy_in_partial_rollout = false;   // --mask-offpolicy-in-partial-rollout

  // Generation.
  std::optional<int64_t> rollout_num_gpus;  // --rollout-num-gpus
  // Rollouts run on GPUs (--rollout-num-gpus given, or CUDA in this process): the
  // perf/*_per_gpu_per_sec rates apply.
  bool on_gpus = false;
  int64_t rollout_num_gpus_per_engine = 1;  // --rollout-num-gpus-per-engine
  int64_t vllm_server_concurrency = 1;      // --vllm-server-concurrency
  // --rollout-seed under --vllm-enable-deterministic-inference: sample i of a group draws with
  // seed + i (slime's sampling_seed); unset otherwise.
  std::optional<int64_t> sampling_seed;
  // Without sampling_seed: --rollout-seed when each sample draws with a seed of its own, mixed
  // from it and the sample's index (the derived arg kSeedEachSampleArg, which the loop sets for
  // the embedded engine, where a per-request seed costs nothing; vLLM gets none, as in slime).
  // Then a run repeats exactly, whatever order the worker threads reach the engine in.
  std::optional<int64_t> per_sample_seed;
  bool group_rm = false;  // --group-rm

  // Plugins.
  std::optional<std::string> rollout_function_path;          // --rollout-function-path
  std::optional<std::string> eval_function_path;             // --eval-function-path
  std::optional<std::string> custom_generate_function_path;  // --custom-generate-function-path
  std::vector<std::string> sample_hook_paths;                // --rollout-sample-hook-path
  std::optional<std::string> sample_filter_path;             // --rollout-sample-filter-path
  std::optional<std::string> all_samples_process_path;       // --rollout-all-samples-process-path
  std::optional<std::string> dynamic_sampling_filter_path;   // --dynamic-sampling-filter-path
  std::optional<std::string> rollout_log_path;               // --custom-rollout-log-function-path
  std::optional<std::string> eval_rollout_log_path;  // --custom-eval-rollout-log-function-path
  // --custom-convert-samples-to-train-data-path
  std::optional<std::string> convert_samples_to_train_data_path;
  RewardPostProcessOptions reward_post_process;

  std::optional<OpdTeacherOptions> opd_teacher;  // the served teacher of --use-opd

  // Debug data.
  std::optional<std::string> load_debug_rollout_data;       // --load-debug-rollout-data
  std::optional<double> load_debug_rollout_data_subsample;  // --load-debug-rollout-data-subsample
  std::optional<std::string> save_debug_rollout_data;       // --save-debug-rollout-data

  // --rollout-batch-size; throws UsageError when it is unset (a train rollout needs it).
  int64_t batch_size() const;

  static RolloutOptions from(const Args& args);
};

}  // namespace vime::rollout
