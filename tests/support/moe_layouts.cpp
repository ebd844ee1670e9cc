#include "support/moe_layouts.hpp"

#include <ATen/ATen.h>

#include <map>
#include <string>

namespace vime::test {

ckpt::NamedTensors fuse_experts_like_transformers5(const ckpt::NamedTensors& hub,
                                                   const std::vector<int>& layers, int experts) {
  std::map<std::string, at::Tensor> by_name(hub.begin(), hub.end());
  ckpt::NamedTensors fused;
  for (const auto& [name, t] : hub)
    if (name.find(".mlp.experts.") == std::string::npos) fused.emplace_back(name, t);
  for (int layer : layers) {
    const std::string p = "model.layers." + std::to_string(layer) + ".mlp.experts.";
    std::vector<at::Tensor> gate_up, down;
    for (int e = 0; e < experts; ++e) {
      const std::string x = p + std::to_string(e) + ".";
      gate_up.push_back(
          at::cat({by_name[x + "gate_proj.weight"], by_name[x + "up_proj.weight"]}, 0));
      down.push_back(by_name[x + "down_proj.weight"]);
    }
    fused.emplace_back(p + "gate_up_proj", at::stack(gate_up, 0));
    fused.emplace_back(p + "down_proj", at::stack(down, 0));
  }
  return fused;
}

}  // namespace vime::test
