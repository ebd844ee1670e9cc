// pass@k of grouped 0/1 rewards (slime/utils/metric_utils.py::compute_pass_rate): per
// group, pass@k = 1 - prod_{x=n-c+1}^{n} (1 - k/x) (or 1 when n - c < k), c = #(reward == 1),
// averaged over the groups that have at least k samples; k = 1, 2, 4, ... up to the group size.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "vime/rollout_types.hpp"

namespace vime::metrics {

// The unbiased estimate 1 - C(n-c, k) / C(n, k) for one group.
double estimate_pass_at_k(int64_t num_samples, int64_t num_correct, int64_t k);

// Consecutive groups of `group_size`; keys "pass@1", "pass@2", ... Empty when group_size <= 1.
// Throws vime::Error when the count is not a multiple of group_size.
Metrics compute_pass_rate(const std::vector<double>& flat_rewards, size_t group_size);
// Groups by id (over-sampled or filtered batches with ragged groups); a k is reported only over
// groups with >= k samples, and left out when no group has that many.
Metrics compute_pass_rate(const std::vector<double>& flat_rewards, size_t group_size,
                          const std::vector<int64_t>& group_ids);

}  // namespace vime::metrics
