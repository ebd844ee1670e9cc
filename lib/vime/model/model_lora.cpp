// Model's LoRA adapters (model/lora.hpp): creation, whole/sharded copies in and out, merging.
#include <ATen/ATen.h>
#include <ATen/CPUGeneratorImpl.h>
#include <ATen/core/grad_mode.h>

#include <cmath>
#include <map>

#include "vime/error.hpp"
#include "vime/model/layer_weights.hpp"
#include "vime/model/model.hpp"

namespace vime {
namespace {

std::string adapter_name(int64_t layer, const std::string& module, char which) {
  auto base = lora_base_weight_name(layer, module);
  base.resize(base.size() - std::string(".weight").size());
  return base + ".lora_" + which + ".weight";
}

bool is_row_parallel(const std::string& module) {
  return module == "o_proj" || module == "down_proj";
}

LoraLinear& module_of(LayerLora& l, size_t index) { return *l.modules()[index]; }

}  // namespace

void Model::add_lora(const LoraConfig& config, uint64_t seed) {
  if (has_lora()) throw Error("the model has LoRA adapters already");
  if (!config.enabled()) return;
  if (config_.is_moe() || config_.is_mla()) {
    throw UsageError(
        "--lora-rank: LoRA on a " +
        std::string(config_.is_moe() ? "mixture-of-experts" : "multi-latent-attention") +
        " model (" + config_.model_type + ") is not supported yet; train it without --lora-rank");
  }
  lora_ = config;
  const auto& tp = parallel_->tp;
  auto gen = at::make_generator<at::CPUGeneratorImpl>(seed);
  const auto cpu_float = at::TensorOptions().dtype(at::kFloat);
  std::map<std::string, size_t> index;
  for (size_t i = 0; i < parameters_.size(); ++i) index[parameters_[i].first] = i;
  at::NoGradGuard no_grad;
  for (int64_t layer = 0; layer < config_.num_layers; ++layer) {
    for (size_t m = 0; m < kLoraModules.size(); ++m) {
      const std::string module = kLoraModules[m];
      if (!config.targets(module)) continue;
      const size_t base = index.at(lora_base_weight_name(layer, module));
      const TpSlice& base_slice = slices_[base];
      const auto full = whole_shape(parameters_[base].second, base_slice, tp.size);
      const int64_t out = full[0], in = full[1];
      // PEFT: nn.init.kaiming_uniform_(lora_A, a=sqrt(5)): U(-1/sqrt(in), 1/sqrt(in)).
      const double bound = 1.0 / std::sqrt(static_cast<double>(in));
      auto a_full = at::empty({config.rank, in}, cpu_float).uniform_(-bound, bound, gen);
      auto b_full = at::zeros({out, config.rank}, cpu_float);
      TpSlice replicated;
      replicated.is_duplicate = tp.is_parallel() && tp.rank != 0;
      LoraLinear& l = module_of(layers_[layer]->lora, m);
      l.row_parallel = is_row_parallel(module);
      l.scale = config.scale();
      l.dropout = config.dropout;
      const TpSlice a_slice = l.row_parallel ? base_slice : replicated;
      const TpSlice b_slice = l.row_parallel ? replicated : base_slice;
      l.b_slice = b_slice;
      l.a = a_slice.of(a_full).contiguous().to(device_, dtype_).requires_grad_(true);
      l.b = b_slice.of(b_full).contiguous().to(device_, dtype_).requires_grad_(true);
      lora_parameters_.emplace_back(adapter_name(layer, module, 'A'), l.a);
      lora_slices_.push_back(a_slice);
      lora_parameters_.emplace_back(adapter_name(layer, module, 'B'), l.b);
      lora_slices_.push_back(b_slice);
    }
  }
  set_requires_grad(false);  // the base is frozen: no gradient, no optimizer state
}

NamedTensorList Model::lora_tensors() const {
  NamedTensorList out;
  for (size_t i = 0; i < lora_parameters_.size(); ++i) {
    out.emplace_back(lora_parameters_[i].first, gather_full(lora_parameters_[i].second.detach(),
                                                            lora_slices_[i], parallel_->tp));
  }
  return out;
}

void Model::load_lora_tensors(const NamedTensorList& tensors, const std::string& where) {
  std::map<std::string, const at::Tensor*> by_name;
  for (const auto& [name, t] : tensors) by_name[name] = &t;
  at::NoGradGuard no_grad;
  for (size_t i = 0; i < lora_parameters_.size(); ++i) {
    auto& [name, param] = lora_parameters_[i];
    auto it = by_name.find(name);
    if (it == by_name.end()) {
      throw Error(where + ": LoRA tensor \"" + name + "\" is missing (was the adapter made with " +
                  "these --target-modules and this model?)");
    }
    const at::Tensor& src = *it->second;
    const auto full = whole_shape(param, lora_slices_[i], parallel_->tp.size);
    if (src.sizes() == at::IntArrayRef(full)) {
      param.copy_(lora_slices_[i].of(src));
    } else if (parallel_->tp.is_parallel() && src.sizes() == param.sizes()) {
      param.copy_(src);
    } else {
      throw Error(where + ": LoRA tensor \"" + name + "\" has shape " + c10::str(src.sizes()) +
                  ", this model and --lora-rank " + std::to_string(lora_.rank) + " need " +
                  c10::str(at::IntArrayRef(full)));
    }
  }
}

NamedTensorList Model::merged_hf_tensors(int64_t vocab_size) const {
  auto tensors = hf_tensors(vocab_size);
  if (!has_lora()) return tensors;
  std::map<std::string, at::Tensor> adapters;
  for (auto& [name, t] : lora_tensors()) adapters[name] = t;
  at::NoGradGuard no_grad;
  for (auto& [name, t] : tensors) {
    const std::string suffix = ".weight";
    const std::string stem = name.substr(0, name.size() - suffix.size());
    auto a = adapters.find(stem + ".lora_A.weight");
    if (a == adapters.end()) continue;
    const auto& b = adapters.at(stem + ".lora_B.weight");
    t = (t.to(at::kFloat) + lora_.scale() * at::matmul(b.to(at::kFloat), a->second.to(at::kFloat)))
            .to(t.scalar_type());
  }
  return tensors;
}

std::optional<std::pair<at::Tensor, TpSlice>> Model::find_parameter(const std::string& name) const {
  for (size_t i = 0; i < parameters_.size(); ++i)
    if (parameters_[i].first == name) return std::make_pair(parameters_[i].second, slices_[i]);
  for (size_t i = 0; i < lora_parameters_.size(); ++i)
    if (lora_parameters_[i].first == name)
      return std::make_pair(lora_parameters_[i].second, lora_slices_[i]);
  return std::nullopt;
}

}  // namespace vime
