// RankReducer over the c10d process group of `vime train`'s data-parallel ranks. Under context
// parallelism the gradients are reduced over a larger group (data x context parallel ranks, which
// hold parts of the same gradients): `gradient_group`, given to the optimizers.
#pragma once

#include "vime/dist/process_group.hpp"
#include "vime/train/rank_reducer.hpp"

namespace vime::train {

class C10dReducer final : public RankReducer {
 public:
  explicit C10dReducer(dist::ProcessGroup& group, dist::ProcessGroup* gradient_group = nullptr)
      : group_(group), gradient_group_(gradient_group != nullptr ? gradient_group : &group) {}
  int64_t rank() const override { return group_.rank(); }
  int64_t world_size() const override { return group_.size(); }
  double all_reduce_sum(double value) override;
  std::vector<double> all_reduce_sums(std::vector<double> values) override;
  void share_samples(std::vector<at::Tensor>& per_sample, const std::vector<int>& owner,
                     const std::vector<int64_t>& lengths) override;
  dist::ProcessGroup& group() { return group_; }
  dist::ProcessGroup* process_group() const override { return gradient_group_; }

 private:
  dist::ProcessGroup& group_;
  dist::ProcessGroup* gradient_group_;
};

}  // namespace vime::train
