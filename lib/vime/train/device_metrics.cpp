#include "vime/train/device_metrics.hpp"

#include <ATen/ATen.h>

#include "vime/error.hpp"

namespace vime::train {

void DeviceMetrics::add(const std::string& name, const at::Tensor& value, double scale,
                        double divisor) {
  if (value.numel() != 1) {
    throw Error("metric '" + name + "' has " + std::to_string(value.numel()) +
                " elements; a logged metric is one number");
  }
  entries_.push_back({name, scale, divisor});
  values_.push_back(value.detach().reshape({}));
}

void DeviceMetrics::add(const std::map<std::string, at::Tensor>& metrics, double scale,
                        double divisor) {
  for (const auto& [name, value] : metrics) add(name, value, scale, divisor);
}

void DeviceMetrics::add_to(std::map<std::string, double>& sums) {
  if (values_.empty()) return;
  // One stack and one copy. Mixed dtypes or devices (a custom loss may report CPU tensors) meet in
  // double on the first value's device; either way each value reaches the host as item() reads it.
  const auto& first = values_.front();
  bool uniform = true;
  for (const auto& v : values_)
    uniform = uniform && v.scalar_type() == first.scalar_type() && v.device() == first.device();
  if (!uniform) {
    const auto device = first.device();
    for (auto& v : values_) v = v.to(device, at::kDouble);
  }
  const auto host = at::stack(values_).to(at::kCPU).to(at::kDouble).contiguous();
  const double* data = host.data_ptr<double>();
  for (size_t i = 0; i < entries_.size(); ++i) {
    const auto& e = entries_[i];
    sums[e.name] += data[i] * e.scale / e.divisor;
  }
  entries_.clear();
  values_.clear();
}

}  // namespace vime::train
