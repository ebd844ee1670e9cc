// The per-rollout sample metrics of slime's rollout manager (ray/rollout.py
// ::_compute_metrics_from_samples, utils/metric_utils.py): response length statistics,
// zero-std group counts, repetition and truncation fractions; and the eval metrics.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "vime/metrics/metrics_options.hpp"
#include "vime/rollout_types.hpp"
#include "vime/sample.hpp"

namespace vime::metrics {

struct Statistics {
  double mean = 0, median = 0, max = 0, min = 0;
};
// numpy's mean/median/max/min. Throws vime::Error on an empty list.
Statistics compute_statistics(const std::vector<double>& values);

// zlib level-9 compression ratio, original bytes / compressed bytes
// (metric_utils.compression_ratio).
double compression_ratio(std::string_view bytes);
// More than 10000 characters (code points) and the last 10000 compress more than 10x.
bool has_repetition(std::string_view utf8_text);

// zero_std/count_{str(round(r, 1))}: groups (by group_index) whose numeric rewards are all equal.
// None or dict rewards are left out; nothing for --advantage-estimator ppo.
Metrics zero_std_metrics(const SampleMetricsOptions& options, const std::vector<Sample>& samples);

// response_len/{mean,median,max,min} (effective lengths), zero_std/*, repetition_frac and
// truncated_ratio, each key prefixed with `prefix` ("rollout/"). Empty for no samples.
Metrics compute_rollout_metrics(const SampleMetricsOptions& options,
                                const std::vector<Sample>& samples,
                                std::string_view prefix = "rollout/");

// For one eval dataset: eval/{name} (mean reward), eval/{name}-truncated_ratio,
// eval/{name}/response_len/*, ..., and eval/{name}-pass@{k} with --log-passrate over groups of
// `samples_per_prompt`.
Metrics eval_dataset_metrics(const SampleMetricsOptions& options, const std::string& name,
                             const EvalDatasetResult& result, size_t samples_per_prompt);

// passrate/pass@{k} of a rollout's raw rewards (groups of --n-samples-per-prompt), with
// --log-passrate.
Metrics rollout_pass_rate_metrics(const SampleMetricsOptions& options,
                                  const std::vector<double>& raw_rewards);

}  // namespace vime::metrics
