#include "vime/rollout/rollout_log.hpp"

#include <algorithm>

#include "vime/metrics/rollout_metrics.hpp"

namespace vime::rollout {

Metrics train_rollout_metrics(const RolloutOptions& options,
                              const metrics::SampleMetricsOptions& metrics_options,
                              const std::vector<Sample>& samples, const Metrics& extra,
                              double rollout_time_s) {
  Metrics out = metrics::compute_rollout_metrics(metrics_options, samples);
  for (const auto& [key, value] : extra) out[key] = value;
  double tokens = 0, effective = 0, longest = 0, longest_effective = 0;
  double cached = 0, prompt_tokens = 0;
  for (const Sample& s : samples) {
    tokens += static_cast<double>(s.response_length);
    effective += static_cast<double>(s.effective_response_length());
    longest = std::max(longest, static_cast<double>(s.response_length));
    longest_effective =
        std::max(longest_effective, static_cast<double>(s.effective_response_length()));
    cached += static_cast<double>(s.prefix_cache_info.cached_tokens);
    prompt_tokens += static_cast<double>(s.prefix_cache_info.total_prompt_tokens);
    if (s.status == SampleStatus::kFailed) {
      const Json* cat = s.metadata.find("error_cat");
      out["rollout/error_cat/" + (cat && cat->is_string() ? cat->as_string() : "unknown")] += 1;
    }
  }
  if (!samples.empty()) {
    if (prompt_tokens > 0) out["rollout/prefix_cache_hit_rate"] = cached / prompt_tokens;
    out["rollout/avg_cached_tokens_per_sample"] = cached / static_cast<double>(samples.size());
  }
  out["perf/rollout_time"] = rollout_time_s;
  if (rollout_time_s > 0 && options.on_gpus) {
    const double gpus =
        static_cast<double>(std::max<int64_t>(options.rollout_num_gpus.value_or(1), 1));
    out["perf/tokens_per_gpu_per_sec"] = tokens / rollout_time_s / gpus;
    out["perf/effective_tokens_per_gpu_per_sec"] = effective / rollout_time_s / gpus;
  }
  if (rollout_time_s > 0) {
    out["perf/longest_sample_tokens_per_sec"] = longest / rollout_time_s;
    out["perf/longest_effective_sample_tokens_per_sec"] = longest_effective / rollout_time_s;
  }
  return out;
}

Metrics eval_rollout_metrics(const metrics::SampleMetricsOptions& metrics_options,
                             const RolloutFnEvalOutput& output,
                             const std::map<std::string, size_t>& samples_per_prompt) {
  Metrics out;
  for (const auto& [name, result] : output.data) {
    if (result.samples.empty()) continue;
    auto it = samples_per_prompt.find(name);
    const size_t n = it == samples_per_prompt.end() ? 1 : it->second;
    for (const auto& [key, value] : metrics::eval_dataset_metrics(metrics_options, name, result, n))
      out[key] = value;
  }
  for (const auto& [key, value] : output.metrics) out[key] = value;
  return out;
}

}  // namespace vime::rollout
