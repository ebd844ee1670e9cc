// LoRA adapters on the decoder's linears, as PEFT's LoraLayer computes them (peft
// tuners/lora/layer.py, Linear.forward): y = W x + b + scale * B(A(dropout(x))), scale =
// alpha / r (alpha / sqrt(r) with rsLoRA). A is [r, in], B is [out, r]; PEFT's init: A
// kaiming-uniform (a = sqrt(5)), B zeros, so a fresh adapter leaves the model unchanged.
// Under tensor parallelism an adapter splits the way its base linear does: a column-parallel
// linear (q/k/v, gate, up) holds B's rows of its output slice and A whole; a row-parallel one
// (o, down) holds A's columns of its input slice and B whole. The whole A (column) or B (row)
// is applied on every rank to its own share of the product, so its gradient is summed over the
// group (Megatron's f operator on the weight), as the replicated norms' are.
#pragma once

#include <ATen/core/Tensor.h>

#include <array>
#include <string>
#include <vector>

#include "vime/args.hpp"
#include "vime/model/tensor_parallel.hpp"

namespace vime {

// PEFT's module names, in the decoder layer's order.
inline constexpr std::array<const char*, 7> kLoraModules = {
    "q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj"};

struct LoraConfig {
  int64_t rank = 0;  // 0: no adapters
  double alpha = 16;
  double dropout = 0;
  bool use_rslora = false;                  // scale alpha / sqrt(r) (PEFT's use_rslora)
  std::vector<std::string> target_modules;  // of kLoraModules, in its order

  bool enabled() const { return rank > 0; }
  double scale() const;
  bool targets(const std::string& module) const;
  // --lora-rank, --lora-alpha, --lora-dropout, --target-modules (all-linear: every linear of the
  // decoder layers, the output layer excluded, as PEFT resolves it). UsageError naming the flag on
  // a bad value or an unknown module name.
  static LoraConfig from(const Args& args);
};

// One linear's adapter: this rank's part of A and B (in the model's dtype) and how it splits.
struct LoraLinear {
  at::Tensor a;  // [r, in] (row-parallel: [r, in / tp])
  at::Tensor b;  // [out, r] (column-parallel: [out / tp, r])
  double scale = 1;
  double dropout = 0;
  bool row_parallel = false;  // o_proj, down_proj
  TpSlice b_slice;            // column-parallel: B's rows (k/v: KV heads, maybe replicated)

  bool active() const { return a.defined(); }
};

// The adapters of one decoder layer (inactive where a module is not targeted).
struct LayerLora {
  LoraLinear q, k, v, o, gate, up, down;
  std::array<LoraLinear*, 7> modules() { return {&q, &k, &v, &o, &gate, &up, &down}; }
  std::array<const LoraLinear*, 7> modules() const { return {&q, &k, &v, &o, &gate, &up, &down}; }
  bool any() const {
    for (const auto* m : modules())
      if (m->active()) return true;
    return false;
  }
};

// at::linear(x, weight, bias) plus the adapter's term when `adapter` is active (null: none).
// Dropout applies only while autograd records (training), as PEFT's module in train mode.
at::Tensor linear_with_adapter(const at::Tensor& x, const at::Tensor& weight,
                               const at::Tensor& bias, const LoraLinear* adapter,
                               const TensorParallel& tp);

// The PEFT name of an adapter tensor: "base_model.model.model.layers.3.self_attn.q_proj.lora_A
// .weight" for layer 3, module "q_proj", `which` 'A' or 'B'.
std::string peft_lora_name(int64_t layer, const std::string& module, char which);
// The HF name of the linear `module` of `layer` ("model.layers.3.mlp.up_proj.weight").
std::string lora_base_weight_name(int64_t layer, const std::string& module);

}  // namespace vime
