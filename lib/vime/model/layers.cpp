#include "vime/model/layers.hpp"

#include <ATen/ATen.h>
#include <ATen/core/grad_mode.h>

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <utility>

#include "vime/core/torch_compat.hpp"
#include "vime/model/rms_norm_kernel.hpp"
#include "vime/model/rope_kernel.hpp"
#include "vime/model/swiglu_kernel.hpp"

#if defined(VIME_HAS_CUDA_KERNELS)
#include <c10/cuda/CUDAStream.h>
#include <torch/csrc/autograd/custom_function.h>
#endif

namespace vime {
namespace {

#if defined(VIME_HAS_CUDA_KERNELS)
void* current_stream(const at::Tensor& t) {
  return c10::cuda::getCurrentCUDAStream(t.device().index()).stream();
}

// x [tokens, heads, head_dim] through rope_kernel.hpp: the rotation, or (backward) its transpose.
at::Tensor rope_kernel_pass(const at::Tensor& x, const at::Tensor& cos, const at::Tensor& sin,
                            bool backward) {
  auto xc = x.contiguous();
  auto out = at::empty_like(xc);
  const auto type = xc.scalar_type() == at::kBFloat16 ? cuda_kernels::RopeType::kBFloat16
                    : xc.scalar_type() == at::kHalf   ? cuda_kernels::RopeType::kHalf
                                                      : cuda_kernels::RopeType::kFloat;
  cuda_kernels::rope(out.data_ptr(), xc.data_ptr(), cos.data_ptr(), sin.data_ptr(), xc.size(0),
                     static_cast<int>(xc.size(1)), static_cast<int>(xc.size(2)), backward, type,
                     current_stream(xc));
  return out;
}

// The rotation as one kernel each way; the tables get no gradient.
struct FusedRope : public torch::autograd::Function<FusedRope> {
  static torch::autograd::variable_list forward(torch::autograd::AutogradContext* ctx, at::Tensor x,
                                                at::Tensor cos, at::Tensor sin) {
    ctx->save_for_backward({cos, sin});
    return {rope_kernel_pass(x, cos, sin, /*backward=*/false)};
  }

  static torch::autograd::variable_list backward(torch::autograd::AutogradContext* ctx,
                                                 torch::autograd::variable_list grads) {
    auto saved = ctx->get_saved_variables();
    if (!grads[0].defined()) return {at::Tensor(), at::Tensor(), at::Tensor()};
    return {rope_kernel_pass(grads[0], saved[0], saved[1], /*backward=*/true), at::Tensor(),
            at::Tensor()};
  }
};

// silu(gate) * up as one kernel each way, keeping gate and up (not silu(gate)) for backward.
struct FusedSwiglu : public torch::autograd::Function<FusedSwiglu> {
  static cuda_kernels::SwigluType type_of(const at::Tensor& t) {
    return t.scalar_type() == at::kBFloat16 ? cuda_kernels::SwigluType::kBFloat16
           : t.scalar_type() == at::kHalf   ? cuda_kernels::SwigluType::kHalf
                                            : cuda_kernels::SwigluType::kFloat;
  }

  static torch::autograd::variable_list forward(torch::autograd::AutogradContext* ctx,
                                                at::Tensor gate, at::Tensor up) {
    gate = gate.contiguous();
    up = up.contiguous();
    ctx->save_for_backward({gate, up});
    auto out = at::empty_like(gate);
    cuda_kernels::swiglu_forward(out.data_ptr(), gate.data_ptr(), up.data_ptr(), gate.numel(),
                                 type_of(gate), current_stream(gate));
    return {out};
  }

  static torch::autograd::variable_list backward(torch::autograd::AutogradContext* ctx,
                                                 torch::autograd::variable_list grads) {
    auto saved = ctx->get_saved_variables();
    if (!grads[0].defined()) return {at::Tensor(), at::Tensor()};
    auto grad = grads[0].contiguous();
    auto grad_gate = at::empty_like(saved[0]), grad_up = at::empty_like(saved[1]);
    cuda_kernels::swiglu_backward(grad_gate.data_ptr(), grad_up.data_ptr(), grad.data_ptr(),
                                  saved[0].data_ptr(), saved[1].data_ptr(), grad.numel(),
                                  type_of(grad), current_stream(grad));
    return {grad_gate, grad_up};
  }
};

cuda_kernels::RmsNormType rms_norm_type(const at::Tensor& t) {
  return t.scalar_type() == at::kBFloat16 ? cuda_kernels::RmsNormType::kBFloat16
         : t.scalar_type() == at::kHalf   ? cuda_kernels::RmsNormType::kHalf
                                          : cuda_kernels::RmsNormType::kFloat;
}

// x: [rows, dim] contiguous. rstd ([rows] fp32) only where backward needs it.
std::pair<at::Tensor, at::Tensor> rms_norm_kernel_forward(const at::Tensor& x,
                                                          const at::Tensor& weight, double eps,
                                                          bool keep_rstd) {
  const int64_t dim = x.size(-1), rows = x.numel() / dim;
  auto out = at::empty_like(x);
  at::Tensor rstd;
  if (keep_rstd) rstd = at::empty({rows}, x.options().dtype(at::kFloat));
  cuda_kernels::rms_norm_forward(out.data_ptr(), keep_rstd ? rstd.data_ptr<float>() : nullptr,
                                 x.data_ptr(), weight.data_ptr(), rows, dim,
                                 static_cast<float>(eps), rms_norm_type(x), current_stream(x));
  return {out, rstd};
}

// RMSNorm as one kernel forward (saving x and rstd) and one backward pass (plus the weight
// gradient's fixed-order sum); eps gets no gradient.
struct FusedRmsNorm : public torch::autograd::Function<FusedRmsNorm> {
  static torch::autograd::variable_list forward(torch::autograd::AutogradContext* ctx, at::Tensor x,
                                                at::Tensor weight, double eps) {
    x = x.contiguous();
    weight = weight.contiguous();
    auto [out, rstd] = rms_norm_kernel_forward(x, weight, eps, /*keep_rstd=*/true);
    ctx->save_for_backward({x, weight, rstd});
    ctx->saved_data["weight_grad"] = weight.requires_grad();
    return {out};
  }

  static torch::autograd::variable_list backward(torch::autograd::AutogradContext* ctx,
                                                 torch::autograd::variable_list grads) {
    auto saved = ctx->get_saved_variables();
    if (!grads[0].defined()) return {at::Tensor(), at::Tensor(), at::Tensor()};
    const auto &x = saved[0], &weight = saved[1], &rstd = saved[2];
    auto grad = grads[0].contiguous();
    const int64_t dim = x.size(-1), rows = x.numel() / dim;
    auto grad_x = at::empty_like(x);
    at::Tensor grad_weight, workspace;
    if (ctx->saved_data["weight_grad"].toBool()) {
      grad_weight = at::empty_like(weight);
      workspace = at::empty({cuda_kernels::rms_norm_backward_workspace(rows, dim)},
                            x.options().dtype(at::kFloat));
    }
    cuda_kernels::rms_norm_backward(
        grad_x.data_ptr(), grad_weight.defined() ? grad_weight.data_ptr() : nullptr,
        workspace.defined() ? workspace.data_ptr<float>() : nullptr, grad.data_ptr(), x.data_ptr(),
        weight.data_ptr(), rstd.data_ptr<float>(), rows, dim, rms_norm_type(x), current_stream(x));
    return {grad_x, grad_weight, at::Tensor()};
  }
};

// VIME_RMS_NORM_KERNEL=0 falls back to the ATen path (at::_fused_rms_norm on LibTorch >= 2.8); read
// once. Only for vime_bench_train's before/after figures on one machine, not a user setting.
bool rms_norm_kernel_enabled() {
  static const bool enabled = [] {
    const char* value = std::getenv("VIME_RMS_NORM_KERNEL");
    return value == nullptr || std::strcmp(value, "0") != 0;
  }();
  return enabled;
}

// x [..., dim] and weight [dim] on one CUDA device, in one of the kernel's dtypes.
bool rms_norm_kernel_fits(const at::Tensor& x, const at::Tensor& weight) {
  const auto type = x.scalar_type();
  return x.is_cuda() && (type == at::kFloat || type == at::kHalf || type == at::kBFloat16) &&
         weight.scalar_type() == type && weight.device() == x.device() && x.dim() >= 1 &&
         weight.dim() == 1 && weight.size(0) == x.size(-1) && x.numel() > 0 &&
         x.size(-1) <= cuda_kernels::kRmsNormMaxDim && rms_norm_kernel_enabled();
}

bool swiglu_kernel_fits(const at::Tensor& gate, const at::Tensor& up) {
  const auto type = gate.scalar_type();
  return gate.is_cuda() && (type == at::kFloat || type == at::kHalf || type == at::kBFloat16) &&
         up.scalar_type() == type && gate.sizes() == up.sizes() && gate.numel() > 0;
}

// q or k [tokens, heads, head_dim] and tables [tokens, 1, head_dim], all on CUDA in one dtype.
bool rope_kernel_fits(const at::Tensor& x, const RopeTables& t) {
  const auto type = x.scalar_type();
  return x.is_cuda() && x.dim() == 3 && x.size(-1) % 2 == 0 &&
         (type == at::kFloat || type == at::kHalf || type == at::kBFloat16) &&
         t.cos.scalar_type() == type && t.sin.scalar_type() == type && t.cos.dim() == 3 &&
         t.cos.sizes() == t.sin.sizes() && t.cos.size(0) == x.size(0) && t.cos.size(1) == 1 &&
         t.cos.size(2) == x.size(2) && t.cos.is_contiguous() && t.sin.is_contiguous() &&
         !t.cos.requires_grad() && !t.sin.requires_grad() && !t.interleaved;
}
#endif

}  // namespace

at::Tensor rms_norm(const at::Tensor& x, const at::Tensor& weight, double eps) {
#if defined(VIME_HAS_CUDA_KERNELS)
  if (rms_norm_kernel_fits(x, weight)) {
    if (at::GradMode::is_enabled() && (x.requires_grad() || weight.requires_grad()))
      return FusedRmsNorm::apply(x, weight, eps)[0];
    return rms_norm_kernel_forward(x.contiguous(), weight.contiguous(), eps, false).first;
  }
#endif
#if VIME_HAS_FUSED_RMS_NORM
  // Only where vime's kernel is switched off or the row is too wide for it. One rounding to x's
  // dtype after the weight (HF rounds the normalised x first, then multiplies in that dtype):
  // identical in fp32, within a bf16 ulp otherwise.
  if (x.is_cuda() && weight.scalar_type() == x.scalar_type())
    return std::get<0>(at::_fused_rms_norm(x, {x.size(-1)}, weight, eps));
#endif
  auto x32 = x.to(at::kFloat);
  auto normalized = x32 * at::rsqrt(x32.pow(2).mean(-1, /*keepdim=*/true) + eps);
  return weight * normalized.to(x.scalar_type());
}

at::Tensor rope_inverse_frequencies(const ModelConfig& config, const at::Device& device) {
  const int64_t dim = config.rotary_dim();
  auto exponents = at::arange(0, dim, 2, at::TensorOptions().dtype(at::kLong)).to(at::kFloat) /
                   static_cast<double>(dim);
  auto inv_freq = 1.0 / at::pow(config.rope_theta, exponents);
  if (config.rope_scaling.type == "llama3") {
    const auto& s = config.rope_scaling;
    const double old_context = static_cast<double>(s.original_max_position_embeddings);
    const double low_freq_wavelen = old_context / s.low_freq_factor;
    const double high_freq_wavelen = old_context / s.high_freq_factor;
    auto wavelen = 2 * M_PI / inv_freq;
    auto scaled = at::where(wavelen > low_freq_wavelen, inv_freq / s.factor, inv_freq);
    auto smooth =
        (old_context / wavelen - s.low_freq_factor) / (s.high_freq_factor - s.low_freq_factor);
    auto smoothed = (1 - smooth) * scaled / s.factor + smooth * scaled;
    auto is_medium = (wavelen >= high_freq_wavelen).logical_and(wavelen <= low_freq_wavelen);
    inv_freq = at::where(is_medium, smoothed, scaled);
  } else if (config.rope_scaling.type == "yarn") {
    // The ramp from extrapolated (fast, high-frequency) to interpolated (slow) dimensions.
    const auto& s = config.rope_scaling;
    const double base = config.rope_theta;
    auto correction_dim = [&](double rotations) {
      return double(dim) *
             std::log(double(s.original_max_position_embeddings) / (rotations * 2 * M_PI)) /
             (2 * std::log(base));
    };
    double low = correction_dim(s.beta_fast), high = correction_dim(s.beta_slow);
    if (s.truncate) {
      low = std::floor(low);
      high = std::ceil(high);
    }
    low = std::max(low, 0.0);
    high = std::min(high, double(dim - 1));
    if (low == high) high += 0.001;
    auto ramp = ((at::arange(dim / 2, at::TensorOptions().dtype(at::kFloat)) - low) / (high - low))
                    .clamp(0, 1);
    auto extrapolation_factor = 1 - ramp;
    auto pos_freqs = at::pow(base, exponents);
    auto interpolation = 1.0 / (s.factor * pos_freqs);
    inv_freq = interpolation * (1 - extrapolation_factor) + inv_freq * extrapolation_factor;
  }
  return inv_freq.to(device);
}

RopeTables rope_tables(const at::Tensor& inverse_frequencies, const at::Tensor& positions,
                       at::ScalarType dtype, bool interleaved, double attention_factor) {
  auto freqs = positions.to(at::kFloat).unsqueeze(1) * inverse_frequencies.unsqueeze(0);
  auto angles = interleaved ? freqs.repeat_interleave(2, -1).unsqueeze(1)
                            : at::cat({freqs, freqs}, -1).unsqueeze(1);  // [T, 1, rotary_dim]
  if (attention_factor != 1.0) {
    return {(angles.cos() * attention_factor).to(dtype),
            (angles.sin() * attention_factor).to(dtype), interleaved};
  }
  return {angles.cos().to(dtype), angles.sin().to(dtype), interleaved};
}

at::Tensor apply_rope(const at::Tensor& x, const RopeTables& tables) {
#if defined(VIME_HAS_CUDA_KERNELS)
  if (rope_kernel_fits(x, tables)) return FusedRope::apply(x, tables.cos, tables.sin)[0];
#endif
  const int64_t dim = tables.cos.size(-1);
  const bool partial = dim < x.size(-1);
  const at::Tensor rot = partial ? x.narrow(-1, 0, dim) : x;
  at::Tensor rotated;
  if (tables.interleaved) {  // (x0, x1, x2, x3, ...) -> (-x1, x0, -x3, x2, ...)
    auto pairs = rot.unflatten(-1, {dim / 2, 2});
    rotated = at::stack({-pairs.select(-1, 1), pairs.select(-1, 0)}, -1).flatten(-2);
  } else {
    const int64_t half = dim / 2;
    rotated = at::cat({-rot.narrow(-1, half, half), rot.narrow(-1, 0, half)}, -1);
  }
  auto out = rot * tables.cos + rotated * tables.sin;
  if (!partial) return out;
  return at::cat({out, x.narrow(-1, dim, x.size(-1) - dim)}, -1);
}

at::Tensor swiglu(const at::Tensor& gate, const at::Tensor& up) {
#if defined(VIME_HAS_CUDA_KERNELS)
  if (swiglu_kernel_fits(gate, up)) return FusedSwiglu::apply(gate, up)[0];
#endif
  return at::silu(gate) * up;
}

at::Tensor swiglu_mlp(const at::Tensor& x, const at::Tensor& gate_weight,
                      const at::Tensor& up_weight, const at::Tensor& down_weight,
                      const LoraLinear* gate_lora, const LoraLinear* up_lora,
                      const LoraLinear* down_lora, const TensorParallel& tp) {
  auto gate = linear_with_adapter(x, gate_weight, {}, gate_lora, tp),
       up = linear_with_adapter(x, up_weight, {}, up_lora, tp);
  return linear_with_adapter(swiglu(gate, up), down_weight, {}, down_lora, tp);
}

}  // namespace vime
