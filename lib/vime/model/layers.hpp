// The small pieces of a Llama/Qwen decoder layer, written as HF transformers computes them so that
// logits agree in fp32 and bf16: RMSNorm (normalize in fp32, scale in the input dtype), RoPE (fp32
// angles, rotate-half), SwiGLU.
#pragma once

#include <ATen/core/Tensor.h>

#include "vime/model/lora.hpp"
#include "vime/model/model_config.hpp"

namespace vime {

// x: [..., dim]; weight: [dim]. On CUDA (weight in x's dtype) one kernel each way
// (rms_norm_kernel.hpp) with HF's roundings: normalized in fp32, rounded to x's dtype, scaled in
// it; backward keeps x and an fp32 rstd per row, sums the weight's gradient in fp32 in a fixed
// order. The trainer and the engine both run it, so their log-probs agree. (VIME_RMS_NORM_KERNEL=0
// switches the kernel off, for vime_bench_train's before/after comparison only.)
at::Tensor rms_norm(const at::Tensor& x, const at::Tensor& weight, double eps);

// [rotary_dim / 2] fp32 inverse frequencies (rotary_dim: config.rotary_dim(), the whole head but
// under GLM's partial rotary), with Llama-3 or YaRN scaling when the config asks for it (HF
// _compute_llama3_parameters / _compute_yarn_parameters).
at::Tensor rope_inverse_frequencies(const ModelConfig& config, const at::Device& device);

struct RopeTables {
  at::Tensor cos;  // [total_tokens, 1, rotary_dim], in the activation dtype
  at::Tensor sin;  // [total_tokens, 1, rotary_dim]
  // GLM-4's layout (HF modeling_glm4.py): each frequency twice in a row, rotating (even, odd)
  // pairs; else each frequency once per half, rotating the two halves (Llama's rotate_half).
  bool interleaved = false;
};
// `attention_factor`: YaRN's scale on cos and sin (ModelConfig::rope_attention_factor), applied in
// fp32 before the cast as HF's rotary embedding does.
RopeTables rope_tables(const at::Tensor& inverse_frequencies, const at::Tensor& positions,
                       at::ScalarType dtype, bool interleaved = false,
                       double attention_factor = 1.0);
// x: [total_tokens, heads, head_dim]; the first rotary_dim channels of each head rotate, the rest
// pass through (GLM's partial rotary). On CUDA, with the whole head rotating in halves, one kernel
// each way (rope_kernel.hpp), computing in fp32 and rounding once: identical in fp32, within a
// bf16 ulp of HF's three roundings otherwise, and the same on the trainer's and the engine's side;
// partial or interleaved rotary runs HF's ATen ops.
at::Tensor apply_rope(const at::Tensor& x, const RopeTables& tables);

// silu(gate) * up, elementwise (one kernel each way on CUDA, like swiglu_mlp's).
at::Tensor swiglu(const at::Tensor& gate, const at::Tensor& up);

// down(silu(gate(x)) * up(x)); weights in HF's [out, in] layout. On CUDA the product is one kernel
// each way (swiglu_kernel.hpp), in fp32 rounded once, like apply_rope. With adapters (lora.hpp)
// on the linears they are active on.
at::Tensor swiglu_mlp(const at::Tensor& x, const at::Tensor& gate_weight,
                      const at::Tensor& up_weight, const at::Tensor& down_weight,
                      const LoraLinear* gate_lora = nullptr, const LoraLinear* up_lora = nullptr,
                      const LoraLinear* down_lora = nullptr, const TensorParallel& tp = {});

}  // namespace vime
