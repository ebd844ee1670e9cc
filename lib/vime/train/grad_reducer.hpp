// The one place where gradients and step-wide sums cross data-parallel ranks. The trainer is
// written for N ranks against this interface; SingleRank is the world of one, and a c10d
// (Gloo/NCCL) implementation comes with multi-rank launching (lib/vime/dist).
#pragma once

#include <ATen/core/Tensor.h>

#include <cstdint>
#include <vector>

namespace vime::train {

class GradReducer {
 public:
  virtual ~GradReducer() = default;
  virtual int64_t rank() const = 0;
  virtual int64_t world_size() const = 0;
  // Averages `grads` over the ranks, in place (reduce, wait, then scale).
  virtual void all_reduce_mean(std::vector<at::Tensor>& grads) = 0;
  virtual double all_reduce_sum(double value) = 0;
};

class SingleRank final : public GradReducer {
 public:
  int64_t rank() const override { return 0; }
  int64_t world_size() const override { return 1; }
  void all_reduce_mean(std::vector<at::Tensor>&) override {}
  double all_reduce_sum(double value) override { return value; }
};

}  // namespace vime::train
