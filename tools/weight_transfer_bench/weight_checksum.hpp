// Exact per-tensor checksums of HF-named weights (integer sums of the raw bytes, position
// weighted), so two processes can show they hold bit-identical tensors. Shared by the bench's
// receiver route and the [gpu] weight_sync test.
#pragma once

#include <ATen/ATen.h>

#include <string>
#include <utility>
#include <vector>

#include "vime/json.hpp"

namespace vime::bench {

inline Json weight_checksums(const std::vector<std::pair<std::string, at::Tensor>>& tensors) {
  Json out = Json::object();
  for (const auto& [name, t] : tensors) {
    auto bytes = t.detach().contiguous().view({-1}).view(at::kByte).to(at::kInt);
    auto weights = at::arange(bytes.numel(), bytes.options()).remainder(251).add(1);
    out[name] = bytes.mul(weights).sum().item<int64_t>();
  }
  return out;
}

}  // namespace vime::bench
