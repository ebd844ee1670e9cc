#include "vime/model/hf_layout.hpp"

#include <ATen/ATen.h>

#include <map>
#include <string>
#include <utility>

namespace vime {

NamedTensorList split_fused_gate_up(const NamedTensorList& tensors) {
  NamedTensorList out;
  static const std::string kFused = "mlp.gate_up_proj.weight";
  for (const auto& [name, t] : tensors) {
    if (!name.ends_with("." + kFused) || t.dim() != 2) {
      out.emplace_back(name, t);
      continue;
    }
    const std::string prefix = name.substr(0, name.size() - kFused.size());
    const int64_t half = t.size(0) / 2;
    out.emplace_back(prefix + "mlp.gate_proj.weight", t.narrow(0, 0, half));
    out.emplace_back(prefix + "mlp.up_proj.weight", t.narrow(0, half, half));
  }
  return out;
}

NamedTensorList hub_layout(NamedTensorList tensors, const ModelConfig& config) {
  if (config.model_type != "glm4") return tensors;
  std::map<std::string, at::Tensor> up_of;
  for (const auto& [name, t] : tensors)
    if (name.ends_with(".mlp.up_proj.weight")) up_of[name] = t;
  NamedTensorList out;
  for (auto& [name, t] : tensors) {
    if (name.ends_with(".mlp.up_proj.weight")) continue;
    static const std::string kGate = "mlp.gate_proj.weight";
    if (name.ends_with("." + kGate)) {
      const std::string prefix = name.substr(0, name.size() - kGate.size());
      out.emplace_back(prefix + "mlp.gate_up_proj.weight",
                       at::cat({t, up_of.at(prefix + "mlp.up_proj.weight")}, 0));
      continue;
    }
    out.emplace_back(std::move(name), std::move(t));
  }
  return out;
}

}  // namespace vime
