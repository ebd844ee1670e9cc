#include "vime/model/layers.hpp"

#include <ATen/ATen.h>

#include <cmath>

#include "vime/core/torch_compat.hpp"

namespace vime {

at::Tensor rms_norm(const at::Tensor& x, const at::Tensor& weight, double eps) {
#if VIME_HAS_FUSED_RMS_NORM
  // One rounding to x's dtype after the weight (HF rounds the normalised x first, then multiplies
  // in that dtype): identical in fp32, within a bf16 ulp otherwise, and the same on the trainer's
  // and the engine's side, so their log-probs still agree.
  if (x.is_cuda() && weight.scalar_type() == x.scalar_type())
    return std::get<0>(at::_fused_rms_norm(x, {x.size(-1)}, weight, eps));
#endif
  auto x32 = x.to(at::kFloat);
  auto normalized = x32 * at::rsqrt(x32.pow(2).mean(-1, /*keepdim=*/true) + eps);
  return weight * normalized.to(x.scalar_type());
}

at::Tensor rope_inverse_frequencies(const ModelConfig& config, const at::Device& device) {
  const int64_t dim = config.head_dim;
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
  }
  return inv_freq.to(device);
}

RopeTables rope_tables(const at::Tensor& inverse_frequencies, const at::Tensor& positions,
                       at::ScalarType dtype) {
  auto freqs = positions.to(at::kFloat).unsqueeze(1) * inverse_frequencies.unsqueeze(0);
  auto angles = at::cat({freqs, freqs}, -1).unsqueeze(1);  // [T, 1, head_dim]
  return {angles.cos().to(dtype), angles.sin().to(dtype)};
}

at::Tensor apply_rope(const at::Tensor& x, const RopeTables& tables) {
  const int64_t half = x.size(-1) / 2;
  auto rotated = at::cat({-x.narrow(-1, half, half), x.narrow(-1, 0, half)}, -1);
  return x * tables.cos + rotated * tables.sin;
}

at::Tensor swiglu_mlp(const at::Tensor& x, const at::Tensor& gate_weight,
                      const at::Tensor& up_weight, const at::Tensor& down_weight) {
  return at::linear(at::silu(at::linear(x, gate_weight)) * at::linear(x, up_weight), down_weight);
}

}  // namespace vime
