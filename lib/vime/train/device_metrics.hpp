// Metrics kept as device tensors while the trainer computes them and copied to the host once, when
// they are read: no host sync per metric per micro-batch. slime's train_one_step likewise keeps
// each micro-batch's logged values as tensors and reduces them after forward_backward_func.
#pragma once

#include <ATen/core/Tensor.h>

#include <map>
#include <string>
#include <vector>

namespace vime::train {

class DeviceMetrics {
 public:
  // `value` (one number) adds value * scale / divisor to the sum of `name`, computed in that order
  // in double precision on the host.
  void add(const std::string& name, const at::Tensor& value, double scale = 1, double divisor = 1);
  // One micro-batch's loss metrics.
  void add(const std::map<std::string, at::Tensor>& metrics, double scale, double divisor);
  // Adds what was recorded to `sums[name]` in the order it was recorded, after one copy to the
  // host, and starts over. Throws vime::Error naming a metric that is not one number.
  void add_to(std::map<std::string, double>& sums);

 private:
  struct Entry {
    std::string name;
    double scale, divisor;
  };
  std::vector<Entry> entries_;
  std::vector<at::Tensor> values_;  // one per entry, detached, as computed
};

}  // namespace vime::train
