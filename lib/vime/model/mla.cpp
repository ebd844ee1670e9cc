#include "vime/model/mla.hpp"

#include <ATen/ATen.h>

namespace vime {
namespace {

// DeepSeek's interleaved pairs (x0, x1), (x2, x3), ... to the two halves rotate-half turns
// (HF apply_rotary_pos_emb_interleave).
at::Tensor deinterleave(const at::Tensor& x) {
  const int64_t d = x.size(-1);
  return x.reshape({x.size(0), x.size(1), d / 2, 2})
      .transpose(2, 3)
      .reshape({x.size(0), x.size(1), d});
}

// kv_b_proj's rows viewed per head: [heads, nope + v, kv_lora_rank].
at::Tensor per_head(const at::Tensor& kv_b, const ModelConfig& c) {
  return kv_b.view({-1, c.mla.qk_nope_head_dim + c.mla.v_head_dim, c.mla.kv_lora_rank});
}

// HF builds q_a_layernorm and kv_a_layernorm as DeepseekV3RMSNorm(rank): its default eps, not
// the config's rms_norm_eps.
constexpr double kLatentNormEps = 1e-6;

}  // namespace

MlaQueryKv mla_project(const MlaWeights& w, const at::Tensor& q_weight, const at::Tensor& h,
                       const ModelConfig& c, const RopeTables& rope, const TensorParallel& tp) {
  const auto& m = c.mla;
  const int64_t tokens = h.size(0);
  // Replicated weights over sharded heads: their gradients sum over the ranks (copy_to_tp).
  at::Tensor q;
  if (m.q_lora_rank > 0) {
    auto q_a = at::linear(h, copy_to_tp(w.q_a, tp));
    q = at::linear(rms_norm(q_a, copy_to_tp(w.q_a_norm, tp), kLatentNormEps), w.q_b);
  } else {
    q = at::linear(h, q_weight);
  }
  q = q.view({tokens, -1, m.qk_head_dim()});
  auto compressed = at::linear(h, copy_to_tp(w.kv_a, tp));  // [T, kv_lora_rank + rope]
  MlaQueryKv out;
  out.q_nope = q.narrow(-1, 0, m.qk_nope_head_dim);
  auto q_rope = q.narrow(-1, m.qk_nope_head_dim, m.qk_rope_head_dim);
  auto k_rope = compressed.narrow(-1, m.kv_lora_rank, m.qk_rope_head_dim).view({tokens, 1, -1});
  if (m.rope_interleave) {
    q_rope = deinterleave(q_rope);
    k_rope = deinterleave(k_rope);
  }
  out.q_rope = apply_rope(q_rope.contiguous(), rope);
  out.k_rope = apply_rope(k_rope.contiguous(), rope);
  out.latent = rms_norm(compressed.narrow(-1, 0, m.kv_lora_rank), copy_to_tp(w.kv_a_norm, tp),
                        kLatentNormEps);
  return out;
}

at::Tensor mla_expanded_attention(const MlaQueryKv& in, const at::Tensor& kv_b,
                                  const ModelConfig& c, const MlaExpandedFn& attend) {
  const auto& m = c.mla;
  const int64_t tokens = in.latent.size(0);
  auto kv = at::linear(in.latent, kv_b).view({tokens, -1, m.qk_nope_head_dim + m.v_head_dim});
  const int64_t heads = kv.size(1);
  auto k = at::cat(
      {kv.narrow(-1, 0, m.qk_nope_head_dim), in.k_rope.expand({tokens, heads, m.qk_rope_head_dim})},
      -1);
  auto q = at::cat({in.q_nope, in.q_rope}, -1);
  auto v = kv.narrow(-1, m.qk_nope_head_dim, m.v_head_dim);
  const int64_t pad = m.qk_head_dim() - m.v_head_dim;
  if (pad <= 0) return attend(q, k, v.contiguous());
  return attend(q, k, at::constant_pad_nd(v, {0, pad})).narrow(-1, 0, m.v_head_dim);
}

at::Tensor mla_absorbed_query(const MlaQueryKv& in, const at::Tensor& kv_b, const ModelConfig& c) {
  auto w_uk = per_head(kv_b, c).narrow(1, 0, c.mla.qk_nope_head_dim);  // [H, nope, r]
  auto q_latent = at::bmm(in.q_nope.transpose(0, 1), w_uk);            // [H, T, r]
  return at::cat({q_latent.transpose(0, 1), in.q_rope}, -1);
}

at::Tensor mla_absorbed_output(const at::Tensor& out_latent, const at::Tensor& kv_b,
                               const ModelConfig& c) {
  auto w_uv = per_head(kv_b, c).narrow(1, c.mla.qk_nope_head_dim, c.mla.v_head_dim);  // [H, v, r]
  auto out = at::bmm(out_latent.transpose(0, 1), w_uv.transpose(1, 2));               // [H, T, v]
  return out.transpose(0, 1);
}

}  // namespace vime
