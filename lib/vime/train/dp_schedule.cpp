#include "vime/train/dp_schedule.hpp"

#include <algorithm>
#include <map>
#include <string>

#include "vime/error.hpp"
#include "vime/train/karmarkar_karp.hpp"

namespace vime::train {

std::vector<int> sample_owners(const std::vector<StepPlan>& plans, size_t num_samples) {
  std::vector<int> owner(num_samples, 0);
  for (const auto& plan : plans) {
    for (size_t r = 0; r < plan.per_rank.size(); ++r)
      for (const auto& mb : plan.per_rank[r])
        for (auto s : mb) owner[s] = static_cast<int>(r);
  }
  return owner;
}

std::vector<MicroBatch> first_fit(const std::vector<int64_t>& samples,
                                  const std::vector<int64_t>& sample_lengths, int64_t max_tokens) {
  std::vector<MicroBatch> bins;
  std::vector<int64_t> bin_tokens;
  for (int64_t s : samples) {
    const int64_t length = sample_lengths.at(s);
    bool placed = false;
    for (size_t b = 0; b < bins.size() && !placed; ++b) {
      if (bin_tokens[b] + length <= max_tokens) {
        bins[b].push_back(s);
        bin_tokens[b] += length;
        placed = true;
      }
    }
    if (!placed) {
      bins.push_back({s});
      bin_tokens.push_back(length);
    }
  }
  return bins;
}

std::vector<MicroBatch> fixed_size(const std::vector<int64_t>& samples, int64_t micro_batch_size) {
  const auto size = static_cast<size_t>(std::max<int64_t>(micro_batch_size, 1));
  std::vector<MicroBatch> bins;
  for (size_t i = 0; i < samples.size(); i += size) {
    bins.emplace_back(
        samples.begin() + static_cast<std::ptrdiff_t>(i),
        samples.begin() + static_cast<std::ptrdiff_t>(std::min(i + size, samples.size())));
  }
  return bins;
}

namespace {

// Split the largest splittable bin in two until the count divides by dp.
void make_divisible(std::vector<MicroBatch>& bins, const std::vector<int64_t>& lengths,
                    int64_t dp) {
  while (static_cast<int64_t>(bins.size()) % dp != 0) {
    auto tokens = [&](const MicroBatch& b) {
      int64_t t = 0;
      for (auto s : b) t += lengths[s];
      return t;
    };
    int best = -1;
    for (size_t i = 0; i < bins.size(); ++i) {
      if (bins[i].size() < 2) continue;
      if (best < 0 || tokens(bins[i]) > tokens(bins[best])) best = static_cast<int>(i);
    }
    if (best < 0) {
      throw UsageError("cannot split " + std::to_string(bins.size()) +
                       " micro-batches evenly over " + std::to_string(dp) +
                       " data-parallel ranks: raise --global-batch-size");
    }
    MicroBatch& b = bins[best];
    MicroBatch second(b.begin() + static_cast<std::ptrdiff_t>(b.size() / 2), b.end());
    b.resize(b.size() / 2);
    bins.insert(bins.begin() + best + 1, std::move(second));
  }
}

}  // namespace

std::vector<StepPlan> plan_steps(const std::vector<int64_t>& sample_lengths,
                                 const std::vector<int64_t>& rollout_ids,
                                 const DpScheduleConfig& config) {
  if (config.global_batch_size <= 0) throw UsageError("--global-batch-size must be > 0");
  if (config.dp_size <= 0) throw UsageError("the data-parallel size must be > 0");
  // 1. Group samples by rollout, in order of first appearance.
  std::vector<std::vector<int64_t>> rollouts;
  std::map<int64_t, size_t> rollout_index;
  for (size_t i = 0; i < sample_lengths.size(); ++i) {
    const int64_t id = rollout_ids.empty() ? static_cast<int64_t>(i) : rollout_ids.at(i);
    auto [it, is_new] = rollout_index.emplace(id, rollouts.size());
    if (is_new) rollouts.emplace_back();
    rollouts[it->second].push_back(static_cast<int64_t>(i));
  }
  const auto num_steps = static_cast<int64_t>(rollouts.size()) / config.global_batch_size;
  std::vector<StepPlan> plans;
  for (int64_t step = 0; step < num_steps; ++step) {
    StepPlan plan;
    for (int64_t r = step * config.global_batch_size; r < (step + 1) * config.global_batch_size;
         ++r) {
      for (auto s : rollouts[r]) plan.samples.push_back(s);
    }
    // 2. Micro-batches.
    std::vector<MicroBatch> bins =
        config.max_tokens_per_gpu.has_value()
            ? first_fit(plan.samples, sample_lengths, *config.max_tokens_per_gpu)
            : fixed_size(plan.samples, config.micro_batch_size);
    // 3. A count divisible by dp; 4. ranks by Karmarkar-Karp on FLOPs, else round-robin.
    make_divisible(bins, sample_lengths, config.dp_size);
    plan.per_rank.resize(config.dp_size);
    if (config.balance_data && config.dp_size > 1) {
      std::vector<double> flops;
      for (const auto& bin : bins) {
        double f = 0;
        for (auto s : bin) {
          const auto length = static_cast<double>(sample_lengths[s]);
          f += config.flops_linear_coeff * length + length * length;
        }
        flops.push_back(f);
      }
      const auto parts = karmarkar_karp(flops, config.dp_size, /*equal_size=*/true);
      for (size_t r = 0; r < parts.size(); ++r)
        for (auto b : parts[r]) plan.per_rank[r].push_back(bins[b]);
    } else {
      for (size_t b = 0; b < bins.size(); ++b) plan.per_rank[b % config.dp_size].push_back(bins[b]);
    }
    plan.num_micro_batches = static_cast<int64_t>(bins.size());
    plans.push_back(std::move(plan));
  }
  return plans;
}

}  // namespace vime::train
