#include "vime/model/attention.hpp"

#include <ATen/ATen.h>

#include <limits>

#include "vime/core/torch_compat.hpp"
#include "vime/error.hpp"

#if VIME_HAS_FLASH_VARLEN
#include <torch/csrc/autograd/custom_function.h>
#endif

namespace vime {
namespace {

at::Tensor math_attention(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v,
                          const VarlenInfo& q_info, const VarlenInfo& k_info, double scale) {
  const int64_t groups = q.size(1) / k.size(1);
  std::vector<at::Tensor> outputs;
  for (size_t i = 0; i + 1 < q_info.cu_seqlens.size(); ++i) {
    const int64_t begin = q_info.cu_seqlens[i], length = q_info.cu_seqlens[i + 1] - begin;
    const int64_t k_begin = k_info.cu_seqlens[i], k_length = k_info.cu_seqlens[i + 1] - k_begin;
    if (length == 0) continue;
    auto qs = q.narrow(0, begin, length).transpose(0, 1);      // [heads, Lq, D]
    auto ks = k.narrow(0, k_begin, k_length).transpose(0, 1);  // [kv_heads, Lk, D]
    auto vs = v.narrow(0, k_begin, k_length).transpose(0, 1);
    if (groups > 1) {
      ks = ks.repeat_interleave(groups, 0);
      vs = vs.repeat_interleave(groups, 0);
    }
    auto scores = at::matmul(qs, ks.transpose(1, 2)).to(at::kFloat) * scale;  // [heads, Lq, Lk]
    auto future =
        at::ones({length, k_length}, q.options().dtype(at::kBool)).triu(k_length - length + 1);
    scores = scores.masked_fill(future, -std::numeric_limits<float>::infinity());
    auto probs = at::softmax(scores, -1).to(q.scalar_type());
    outputs.push_back(at::matmul(probs, vs).transpose(0, 1));  // [L, heads, D]
  }
  if (outputs.empty()) return at::zeros_like(q);
  return at::cat(outputs, 0);
}

#if VIME_HAS_FLASH_VARLEN
// Flash attention's forward and backward kernels as one autograd node.
struct FlashVarlenAttention : public torch::autograd::Function<FlashVarlenAttention> {
  static torch::autograd::variable_list forward(torch::autograd::AutogradContext* ctx, at::Tensor q,
                                                at::Tensor k, at::Tensor v, at::Tensor cu_q,
                                                at::Tensor cu_k, int64_t max_q, int64_t max_k,
                                                double scale) {
    auto [out, lse, rng_state, unused, debug] =
        at::_flash_attention_forward(q, k, v, cu_q, cu_k, max_q, max_k, 0.0, /*is_causal=*/true,
                                     /*return_debug_mask=*/false, scale);
    ctx->save_for_backward({q, k, v, out, lse, cu_q, cu_k, rng_state, unused});
    ctx->saved_data["max_q"] = max_q;
    ctx->saved_data["max_k"] = max_k;
    ctx->saved_data["scale"] = scale;
    return {out};
  }

  static torch::autograd::variable_list backward(torch::autograd::AutogradContext* ctx,
                                                 torch::autograd::variable_list grads) {
    auto s = ctx->get_saved_variables();
    const int64_t max_q = ctx->saved_data["max_q"].toInt();
    const int64_t max_k = ctx->saved_data["max_k"].toInt();
    const double scale = ctx->saved_data["scale"].toDouble();
    auto [dq, dk, dv] = at::_flash_attention_backward(grads[0].contiguous(), s[0], s[1], s[2], s[3],
                                                      s[4], s[5], s[6], max_q, max_k, 0.0,
                                                      /*is_causal=*/true, s[7], s[8], scale);
    return {dq, dk, dv, at::Tensor(), at::Tensor(), at::Tensor(), at::Tensor(), at::Tensor()};
  }
};
#endif

}  // namespace

bool flash_attention_available(const at::Tensor& q) {
  return compat::kHasFlashVarlen && q.is_cuda() &&
         (q.scalar_type() == at::kBFloat16 || q.scalar_type() == at::kHalf);
}

at::Tensor varlen_causal_attention(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v,
                                   const VarlenInfo& info, double scale, AttentionBackend backend) {
  return varlen_causal_attention(q, k, v, info, info, scale, backend);
}

at::Tensor varlen_causal_attention(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v,
                                   const VarlenInfo& q_info, const VarlenInfo& k_info, double scale,
                                   AttentionBackend backend) {
  if (backend == AttentionBackend::kAuto) {
    backend = flash_attention_available(q) ? AttentionBackend::kFlash : AttentionBackend::kMath;
  }
  if (backend == AttentionBackend::kMath) return math_attention(q, k, v, q_info, k_info, scale);
#if VIME_HAS_FLASH_VARLEN
  if (!flash_attention_available(q)) {
    throw Error("flash attention needs CUDA bf16/fp16 tensors");
  }
  auto on_device = [&](const VarlenInfo& info) {
    return info.cu_seqlens_device.defined()
               ? info.cu_seqlens_device
               : at::tensor(std::vector<int32_t>(info.cu_seqlens.begin(), info.cu_seqlens.end()),
                            at::TensorOptions().dtype(at::kInt))
                     .to(q.device());
  };
  auto cu_q = on_device(q_info);
  auto cu_k = &q_info == &k_info ? cu_q : on_device(k_info);
  return FlashVarlenAttention::apply(q.contiguous(), k.contiguous(), v.contiguous(), cu_q, cu_k,
                                     q_info.max_seqlen, k_info.max_seqlen, scale)[0];
#else
  throw Error("flash attention is not in this LibTorch build (needs CUDA LibTorch 2.1+)");
#endif
}

}  // namespace vime
