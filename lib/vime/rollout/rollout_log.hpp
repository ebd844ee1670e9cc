// The metrics RolloutManager reports per rollout (slime's RolloutManager._log_rollout_data and
// _log_eval_rollout_data), and the custom log hooks that can replace them.
#pragma once

#include <cstdint>
#include <vector>

#include "vime/metrics/metrics_options.hpp"
#include "vime/rollout/rollout_options.hpp"
#include "vime/rollout_types.hpp"

namespace vime::rollout {

// compute_rollout_metrics (rollout/response_len/*, zero_std, repetition_frac, truncated_ratio),
// `extra` (the rollout function's metrics, dynamic-filter drops), rollout/error_cat/{category}
// counts of FAILED samples, rollout/prefix_cache_hit_rate and avg_cached_tokens_per_sample,
// perf/rollout_time, perf/{,effective_}tokens_per_gpu_per_sec (response tokens over
// max(1, --rollout-num-gpus); on GPUs only) and perf/longest_{,effective_}sample_tokens_per_sec.
Metrics train_rollout_metrics(const RolloutOptions& options,
                              const metrics::SampleMetricsOptions& metrics_options,
                              const std::vector<Sample>& samples, const Metrics& extra,
                              double rollout_time_s);
// eval_dataset_metrics for each dataset (groups of its n_samples_per_eval_prompt) plus `extra`.
Metrics eval_rollout_metrics(const metrics::SampleMetricsOptions& metrics_options,
                             const RolloutFnEvalOutput& output,
                             const std::map<std::string, size_t>& samples_per_prompt);

}  // namespace vime::rollout
