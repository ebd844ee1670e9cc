#include "vime/model/lora.hpp"

#include <ATen/ATen.h>
#include <ATen/core/grad_mode.h>

#include <algorithm>
#include <cmath>

#include "vime/error.hpp"

namespace vime {

double LoraConfig::scale() const {
  const double r = static_cast<double>(rank);
  return use_rslora ? alpha / std::sqrt(r) : alpha / r;
}

bool LoraConfig::targets(const std::string& module) const {
  return std::find(target_modules.begin(), target_modules.end(), module) != target_modules.end();
}

LoraConfig LoraConfig::from(const Args& args) {
  LoraConfig c;
  if (!args.is_set("lora_rank")) return c;
  c.rank = args.get_int("lora_rank");
  if (c.rank <= 0) throw UsageError(args.flag_name("lora_rank") + " must be > 0");
  c.alpha = args.is_set("lora_alpha") ? args.get_double("lora_alpha") : 8.0;  // PEFT's default
  if (!(c.alpha > 0)) throw UsageError(args.flag_name("lora_alpha") + " must be > 0");
  c.dropout = args.get_double("lora_dropout");
  if (!(c.dropout >= 0 && c.dropout < 1))
    throw UsageError(args.flag_name("lora_dropout") + " must be in [0, 1)");
  auto names = args.get_string_list("target_modules");
  if (names.empty()) names = {"all-linear"};
  std::vector<std::string> chosen;
  for (const auto& n : names) {
    if (n == "all-linear") {
      chosen.assign(kLoraModules.begin(), kLoraModules.end());
      continue;
    }
    if (std::find(kLoraModules.begin(), kLoraModules.end(), n) == kLoraModules.end()) {
      std::string known;
      for (const char* m : kLoraModules) known += std::string(known.empty() ? "" : " ") + m;
      throw UsageError(args.flag_name("target_modules") + ": unknown module \"" + n +
                       "\" (the decoder's linears: " + known + ", or all-linear)");
    }
    chosen.push_back(n);
  }
  for (const char* m : kLoraModules)  // PEFT's order, each once
    if (std::find(chosen.begin(), chosen.end(), m) != chosen.end()) c.target_modules.push_back(m);
  return c;
}

at::Tensor linear_with_adapter(const at::Tensor& x, const at::Tensor& weight,
                               const at::Tensor& bias, const LoraLinear* adapter,
                               const TensorParallel& tp) {
  auto y = at::linear(x, weight, bias);
  if (adapter == nullptr || !adapter->active()) return y;
  const bool training =
      at::GradMode::is_enabled() && (adapter->a.requires_grad() || adapter->b.requires_grad());
  const auto& in = training && adapter->dropout > 0 ? at::dropout(x, adapter->dropout, true) : x;
  // The whole factor sees only this rank's share of the product: its gradient sums over the group.
  const auto a = adapter->row_parallel ? adapter->a : copy_to_tp(adapter->a, tp);
  const auto b = adapter->row_parallel ? copy_to_tp(adapter->b, tp)
                                       : sum_over_replicas(adapter->b, adapter->b_slice, tp);
  return y + at::linear(at::linear(in, a), b) * adapter->scale;
}

std::string lora_base_weight_name(int64_t layer, const std::string& module) {
  const bool attention =
      module == "q_proj" || module == "k_proj" || module == "v_proj" || module == "o_proj";
  return "model.layers." + std::to_string(layer) + (attention ? ".self_attn." : ".mlp.") + module +
         ".weight";
}

std::string peft_lora_name(int64_t layer, const std::string& module, char which) {
  auto base = lora_base_weight_name(layer, module);
  base.resize(base.size() - std::string(".weight").size());
  return "base_model.model." + base + ".lora_" + which + ".weight";
}

}  // namespace vime
