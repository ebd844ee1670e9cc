#include "vime/metrics/rollout_metrics.hpp"

#include <zlib.h>

#include <algorithm>
#include <limits>
#include <map>
#include <optional>

#include "vime/error.hpp"
#include "vime/metrics/metric_names.hpp"
#include "vime/metrics/pass_at_k.hpp"
#include "vime/metrics/reward_value.hpp"
#include "vime/python_format.hpp"

namespace vime::metrics {
namespace {

constexpr size_t kRepetitionWindowChars = 10000;
constexpr double kRepetitionRatio = 10.0;

void add_prefixed(Metrics& out, std::string_view prefix, const Metrics& in) {
  for (const auto& [key, value] : in) out[std::string(prefix) + key] = value;
}

void add_statistics(Metrics& out, const std::string& prefix, const std::vector<double>& values) {
  Statistics s = compute_statistics(values);
  out[prefix + "mean"] = s.mean;
  out[prefix + "median"] = s.median;
  out[prefix + "max"] = s.max;
  out[prefix + "min"] = s.min;
}

bool is_utf8_continuation(char c) { return (static_cast<unsigned char>(c) & 0xC0) == 0x80; }

}  // namespace

Statistics compute_statistics(const std::vector<double>& values) {
  if (values.empty()) throw Error("cannot compute statistics of an empty list");
  Statistics s;
  double sum = 0;
  for (double v : values) sum += v;
  s.mean = sum / static_cast<double>(values.size());
  std::vector<double> sorted = values;
  std::sort(sorted.begin(), sorted.end());
  const size_t mid = sorted.size() / 2;
  s.median = sorted.size() % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2.0;
  s.min = sorted.front();
  s.max = sorted.back();
  return s;
}

double compression_ratio(std::string_view bytes) {
  if (bytes.empty()) return std::numeric_limits<double>::infinity();
  uLongf compressed_size = compressBound(static_cast<uLong>(bytes.size()));
  std::vector<Bytef> compressed(compressed_size);
  if (compress2(compressed.data(), &compressed_size, reinterpret_cast<const Bytef*>(bytes.data()),
                static_cast<uLong>(bytes.size()), 9) != Z_OK)
    throw Error("zlib could not compress a response");
  return static_cast<double>(bytes.size()) / static_cast<double>(compressed_size);
}

bool has_repetition(std::string_view utf8_text) {
  // The last kRepetitionWindowChars code points, found by walking back over lead bytes.
  size_t chars = 0;
  size_t start = utf8_text.size();
  while (start > 0 && chars <= kRepetitionWindowChars) {
    --start;
    if (!is_utf8_continuation(utf8_text[start])) ++chars;
  }
  if (chars <= kRepetitionWindowChars) return false;  // the whole text is not longer than 10000
  // `start` is on the first char beyond the window; step to the window's first char.
  ++start;
  while (start < utf8_text.size() && is_utf8_continuation(utf8_text[start])) ++start;
  return compression_ratio(utf8_text.substr(start)) > kRepetitionRatio;
}

Metrics zero_std_metrics(const SampleMetricsOptions& options, const std::vector<Sample>& samples) {
  Metrics out;
  if (!options.zero_std) return out;
  std::map<std::optional<int64_t>, std::vector<const Json*>> groups;
  std::vector<std::optional<int64_t>> order;
  for (const Sample& sample : samples) {
    auto [it, inserted] = groups.try_emplace(sample.group_index);
    if (inserted) order.push_back(sample.group_index);
    if (const Json* reward = numeric_reward(options.reward_key, sample))
      it->second.push_back(reward);
  }
  for (const auto& id : order) {
    const auto& rewards = groups[id];
    if (rewards.empty()) continue;
    const double first = rewards[0]->is_bool() ? rewards[0]->as_bool() : rewards[0]->as_double();
    const bool all_equal = std::all_of(rewards.begin(), rewards.end(), [&](const Json* r) {
      return (r->is_bool() ? r->as_bool() : r->as_double()) == first;
    });
    if (all_equal) out[names::kZeroStdCountPrefix + python_str_round(*rewards[0], 1)] += 1;
  }
  return out;
}

Metrics compute_rollout_metrics(const SampleMetricsOptions& options,
                                const std::vector<Sample>& samples, std::string_view prefix) {
  Metrics out;
  if (samples.empty()) return out;
  std::vector<double> lengths;
  double repeated = 0, truncated = 0;
  for (const Sample& s : samples) {
    lengths.push_back(static_cast<double>(s.effective_response_length()));
    if (has_repetition(s.response)) ++repeated;
    if (s.status == SampleStatus::kTruncated) ++truncated;
  }
  const std::string p(prefix);
  add_statistics(out, p + names::kResponseLenPrefix, lengths);
  add_prefixed(out, prefix, zero_std_metrics(options, samples));
  out[p + names::kRepetitionFrac] = repeated / static_cast<double>(samples.size());
  out[p + names::kTruncatedRatio] = truncated / static_cast<double>(samples.size());
  return out;
}

Metrics eval_dataset_metrics(const SampleMetricsOptions& options, const std::string& name,
                             const EvalDatasetResult& result, size_t samples_per_prompt) {
  Metrics out;
  const std::string base = std::string(names::kEvalPrefix) + name;
  if (!result.rewards.empty()) {
    double sum = 0;
    for (double r : result.rewards) sum += r;
    out[base] = sum / static_cast<double>(result.rewards.size());
  }
  if (!result.truncated.empty()) {
    double sum = 0;
    for (int32_t t : result.truncated) sum += t;
    out[base + names::kEvalTruncatedSuffix] = sum / static_cast<double>(result.truncated.size());
  }
  if (!result.samples.empty()) {
    std::vector<double> lengths;
    for (const Sample& s : result.samples)
      lengths.push_back(static_cast<double>(s.effective_response_length()));
    add_statistics(out, base + "/" + names::kResponseLenPrefix, lengths);
  }
  if (options.log_passrate)
    add_prefixed(out, base + "-", compute_pass_rate(result.rewards, samples_per_prompt));
  return out;
}

Metrics rollout_pass_rate_metrics(const SampleMetricsOptions& options,
                                  const std::vector<double>& raw_rewards) {
  if (!options.log_passrate) return {};
  Metrics out;
  add_prefixed(out, names::kPassRatePrefix,
               compute_pass_rate(raw_rewards, static_cast<size_t>(options.n_samples_per_prompt)));
  return out;
}

}  // namespace vime::metrics
