#include "vime/train/grad_buckets.hpp"

#include <algorithm>

namespace vime {

std::vector<GradBucketLayout> plan_grad_buckets(const std::vector<at::Tensor>& params,
                                                int64_t bucket_elements, int64_t world_size) {
  world_size = std::max<int64_t>(world_size, 1);
  std::vector<GradBucketLayout> buckets;
  auto close = [&] {
    auto& b = buckets.back();
    b.numel = (b.numel + world_size - 1) / world_size * world_size;
  };
  for (size_t k = params.size(); k-- > 0;) {
    const auto& p = params[k];
    const bool fits = !buckets.empty() && buckets.back().numel < bucket_elements &&
                      params[buckets.back().params.front()].scalar_type() == p.scalar_type();
    if (!fits) {
      if (!buckets.empty()) close();
      buckets.emplace_back();
    }
    auto& b = buckets.back();
    b.params.push_back(k);
    b.offsets.push_back(b.numel);
    b.numel += p.numel();
  }
  if (!buckets.empty()) close();
  return buckets;
}

}  // namespace vime
