#include "vime/metrics/pass_at_k.hpp"

#include <map>
#include <string>

#include "vime/error.hpp"
#include "vime/metrics/metric_names.hpp"

namespace vime::metrics {
namespace {

struct GroupCount {
  int64_t num_samples = 0;
  int64_t num_correct = 0;
};

Metrics pass_rate_of_groups(const std::vector<GroupCount>& groups, size_t group_size) {
  Metrics out;
  if (group_size <= 1) return out;
  for (int64_t k = 1; k <= static_cast<int64_t>(group_size); k *= 2) {
    double sum = 0;
    int64_t eligible = 0;
    for (const GroupCount& g : groups) {
      if (g.num_samples < k) continue;
      sum += estimate_pass_at_k(g.num_samples, g.num_correct, k);
      ++eligible;
    }
    if (eligible > 0)
      out[std::string(names::kPassAtPrefix) + std::to_string(k)] =
          sum / static_cast<double>(eligible);
  }
  return out;
}

}  // namespace

double estimate_pass_at_k(int64_t num_samples, int64_t num_correct, int64_t k) {
  if (num_samples - num_correct < k) return 1.0;
  double product = 1.0;
  for (int64_t x = num_samples - num_correct + 1; x <= num_samples; ++x)
    product *= 1.0 - static_cast<double>(k) / static_cast<double>(x);
  return 1.0 - product;
}

Metrics compute_pass_rate(const std::vector<double>& flat_rewards, size_t group_size) {
  if (group_size <= 1) return {};
  if (flat_rewards.size() % group_size != 0)
    throw Error("pass@k: " + std::to_string(flat_rewards.size()) +
                " rewards do not split into groups of " + std::to_string(group_size));
  std::vector<GroupCount> groups(flat_rewards.size() / group_size);
  for (size_t i = 0; i < flat_rewards.size(); ++i) {
    GroupCount& g = groups[i / group_size];
    ++g.num_samples;
    if (flat_rewards[i] == 1.0) ++g.num_correct;
  }
  return pass_rate_of_groups(groups, group_size);
}

Metrics compute_pass_rate(const std::vector<double>& flat_rewards, size_t group_size,
                          const std::vector<int64_t>& group_ids) {
  if (group_size <= 1) return {};
  if (flat_rewards.size() != group_ids.size())
    throw Error("pass@k: " + std::to_string(flat_rewards.size()) + " rewards but " +
                std::to_string(group_ids.size()) + " group ids");
  std::map<int64_t, GroupCount> by_id;
  for (size_t i = 0; i < flat_rewards.size(); ++i) {
    GroupCount& g = by_id[group_ids[i]];
    ++g.num_samples;
    if (flat_rewards[i] == 1.0) ++g.num_correct;
  }
  std::vector<GroupCount> groups;
  for (const auto& [id, g] : by_id) groups.push_back(g);
  return pass_rate_of_groups(groups, group_size);
}

}  // namespace vime::metrics
