// Where step-wide sums and per-sample data cross data-parallel ranks (gradients cross inside the
// Optimizer, which holds them in flat buckets). The trainer is written for N ranks against this
// interface; SingleRank is the world of one, C10dReducer (c10d_reducer.hpp) the c10d process group
// of `vime train`'s ranks.
#pragma once

#include <ATen/core/Tensor.h>

#include <cstdint>
#include <vector>

namespace vime::dist {
class ProcessGroup;
}

namespace vime::train {

class RankReducer {
 public:
  virtual ~RankReducer() = default;
  virtual int64_t rank() const = 0;
  virtual int64_t world_size() const = 0;
  // The c10d group over which the optimizers reduce their gradients and shard their state
  // (Optimizer(..., group)): these ranks, or with context parallelism data x context parallel
  // ranks; null when alone.
  virtual dist::ProcessGroup* process_group() const { return nullptr; }
  virtual double all_reduce_sum(double value) = 0;
  // Element-wise sums over the ranks, in one collective.
  virtual std::vector<double> all_reduce_sums(std::vector<double> values) = 0;
  // Per-sample tensors computed where each sample trains: per_sample[i] ([lengths[i]] values) is
  // defined on rank owner[i]; afterwards every rank holds every sample's, as fp32 on the device of
  // the defined ones. Samples whose owner is -1 stay as they are.
  virtual void share_samples(std::vector<at::Tensor>& per_sample, const std::vector<int>& owner,
                             const std::vector<int64_t>& lengths) = 0;
};

class SingleRank final : public RankReducer {
 public:
  int64_t rank() const override { return 0; }
  int64_t world_size() const override { return 1; }
  double all_reduce_sum(double value) override { return value; }
  std::vector<double> all_reduce_sums(std::vector<double> values) override { return values; }
  void share_samples(std::vector<at::Tensor>&, const std::vector<int>&,
                     const std::vector<int64_t>&) override {}
};

}  // namespace vime::train
