#include "vime/train/linear_log_probs.hpp"

#include <ATen/ATen.h>
#include <ATen/core/dispatch/Dispatcher.h>
#include <torch/csrc/autograd/custom_function.h>

#include <algorithm>
#include <atomic>

#include "vime/error.hpp"
#include "vime/train/linear_log_probs_kernel.hpp"

#if defined(VIME_HAS_CUDA_KERNELS)
#include <c10/cuda/CUDAStream.h>
#endif

namespace vime::train {
namespace {

using torch::autograd::AutogradContext;
using torch::autograd::variable_list;

// The fused CUDA kernels (linear_log_probs_kernel.hpp) read the GEMM's logits in their own dtype;
// elsewhere (CPU, the reference) the chunk's logits are converted to fp32 and go through ATen ops.
bool use_kernels(const at::Tensor& hidden) {
#if defined(VIME_HAS_CUDA_KERNELS)
  const auto type = hidden.scalar_type();
  return hidden.is_cuda() && (type == at::kBFloat16 || type == at::kHalf || type == at::kFloat);
#else
  (void)hidden;
  return false;
#endif
}

#if defined(VIME_HAS_CUDA_KERNELS)
cuda_kernels::LogitsType logits_type(const at::Tensor& logits) {
  switch (logits.scalar_type()) {
    case at::kHalf:
      return cuda_kernels::LogitsType::kHalf;
    case at::kBFloat16:
      return cuda_kernels::LogitsType::kBFloat16;
    default:
      return cuda_kernels::LogitsType::kFloat;
  }
}

void* current_stream(const at::Tensor& t) {
  return c10::cuda::getCurrentCUDAStream(t.device().index()).stream();
}

// A row-indexed fp32 vector's element `begin`, or null for an undefined one.
const float* row_ptr(const at::Tensor& t, int64_t begin) {
  return t.defined() ? t.data_ptr<float>() + begin : nullptr;
}
#endif

// One chunk's logits in fp32 at temperature T: [n, vocab].
at::Tensor chunk_logits(const at::Tensor& hidden_rows, const at::Tensor& weight,
                        double temperature) {
  auto z = at::mm(hidden_rows, weight.t()).to(at::kFloat);
  if (temperature != 1.0) z.div_(temperature);
  return z;
}

// One chunk through the forward kernel: its logits in the GEMM's dtype, read once. lp, lse and
// ent (undefined: no entropy) are the whole [n] outputs, written at rows begin .. begin + len.
void fused_forward(const at::Tensor& hidden, const at::Tensor& weight, const at::Tensor& chunk_rows,
                   const at::Tensor& targets, int64_t begin, double temperature, at::Tensor& lp,
                   at::Tensor& lse, at::Tensor& ent) {
#if defined(VIME_HAS_CUDA_KERNELS)
  auto z = at::mm(hidden.index_select(0, chunk_rows), weight.t());
  cuda_kernels::linear_log_probs_forward(
      z.data_ptr(), z.size(0), z.size(1), z.stride(0), targets.data_ptr<int64_t>() + begin,
      static_cast<float>(temperature), lp.data_ptr<float>() + begin, lse.data_ptr<float>() + begin,
      ent.defined() ? ent.data_ptr<float>() + begin : nullptr, logits_type(z), current_stream(z));
#else
  (void)hidden, (void)weight, (void)chunk_rows, (void)targets, (void)begin, (void)temperature;
  (void)lp, (void)lse, (void)ent;
  throw Error("linear log-probs: built without CUDA kernels");
#endif
}

// One chunk's gradient w.r.t. its (recomputed) logits through the backward kernel, in the GEMM's
// dtype, in place. g_lp / g_h: the [n] fp32 output gradients (undefined: zero).
at::Tensor fused_grad_logits(const at::Tensor& h, const at::Tensor& weight,
                             const at::Tensor& targets, const at::Tensor& lse,
                             const at::Tensor& ent, const at::Tensor& g_lp, const at::Tensor& g_h,
                             int64_t begin, double temperature) {
#if defined(VIME_HAS_CUDA_KERNELS)
  auto z = at::mm(h, weight.t());
  cuda_kernels::linear_log_probs_backward(
      z.data_ptr(), z.size(0), z.size(1), z.stride(0), targets.data_ptr<int64_t>() + begin,
      static_cast<float>(temperature), lse.data_ptr<float>() + begin, row_ptr(ent, begin),
      row_ptr(g_lp, begin), row_ptr(g_h, begin), logits_type(z), current_stream(z));
  return z;
#else
  (void)h, (void)weight, (void)targets, (void)lse, (void)ent, (void)g_lp, (void)g_h, (void)begin;
  (void)temperature;
  throw Error("linear log-probs: built without CUDA kernels");
#endif
}

// acc (fp32) += g^T h, for a chunk's bf16/fp16 gradient of the logits g and hidden rows h. Where
// LibTorch has addmm with an fp32 out_dtype over bf16/fp16 inputs and accepts the fp32 accumulator
// as its `self` (recent 2.x on CUDA), the GEMM adds in its epilogue; elsewhere, or when it refuses
// (looked up by schema, so any LibTorch compiles this), a GEMM in the inputs' dtype and an fp32
// add.
void accumulate_grad_weight(at::Tensor& acc, const at::Tensor& g, const at::Tensor& h) {
  static std::atomic<bool> refused{false};
  if (acc.is_cuda() && g.scalar_type() != acc.scalar_type() && !refused.load()) {
    try {
      static const auto addmm_dtype_out =
          c10::Dispatcher::singleton()
              .findSchemaOrThrow("aten::addmm", "dtype_out")
              .typed<at::Tensor&(const at::Tensor&, const at::Tensor&, const at::Tensor&,
                                 at::ScalarType, const at::Scalar&, const at::Scalar&,
                                 at::Tensor&)>();
      addmm_dtype_out.call(acc, g.t(), h, acc.scalar_type(), 1, 1, acc);
      return;
    } catch (const c10::Error&) {
      refused = true;
    }
  }
  acc.add_(at::mm(g.t(), h));
}

struct LinearLogProbs : public torch::autograd::Function<LinearLogProbs> {
  static variable_list forward(AutogradContext* ctx, at::Tensor hidden, at::Tensor weight,
                               at::Tensor rows, at::Tensor targets, double temperature,
                               int64_t chunk_rows, bool with_entropy) {
    const int64_t n = rows.numel();
    auto f32 = hidden.options().dtype(at::kFloat);
    auto lp = at::empty({n}, f32);
    auto lse = at::empty({n}, f32);
    auto ent = with_entropy ? at::empty({n}, f32) : at::Tensor();
    const bool fused = use_kernels(hidden);
    for (int64_t begin = 0; begin < n; begin += chunk_rows) {
      const int64_t len = std::min(chunk_rows, n - begin);
      if (fused) {
        fused_forward(hidden, weight, rows.narrow(0, begin, len), targets, begin, temperature, lp,
                      lse, ent);
        continue;
      }
      auto z =
          chunk_logits(hidden.index_select(0, rows.narrow(0, begin, len)), weight, temperature);
      auto chunk_lse = at::logsumexp(z, {-1});
      auto target_z = z.gather(1, targets.narrow(0, begin, len).unsqueeze(1)).squeeze(1);
      lp.narrow(0, begin, len).copy_(target_z - chunk_lse);
      lse.narrow(0, begin, len).copy_(chunk_lse);
      if (with_entropy) {  // H = lse − Σ softmax(z)·z, the dot product as a batched GEMM
        auto p = at::softmax(z, -1);
        auto pz = at::bmm(p.unsqueeze(1), z.unsqueeze(2)).view({len});
        ent.narrow(0, begin, len).copy_(chunk_lse - pz);
      }
    }
    ctx->set_materialize_grads(false);  // an unused entropy costs nothing in backward
    ctx->save_for_backward({hidden, weight, rows, targets, lse, with_entropy ? ent : lse});
    ctx->saved_data["temperature"] = temperature;
    ctx->saved_data["chunk_rows"] = chunk_rows;
    if (!with_entropy) return {lp};
    return {lp, ent};
  }

  static variable_list backward(AutogradContext* ctx, variable_list grads) {
    auto saved = ctx->get_saved_variables();
    const auto &hidden = saved[0], &weight = saved[1], &rows = saved[2], &targets = saved[3];
    const auto &lse = saved[4], &ent = saved[5];
    const double temperature = ctx->saved_data["temperature"].toDouble();
    const int64_t chunk_rows = ctx->saved_data["chunk_rows"].toInt();
    const bool has_lp = grads[0].defined(), has_ent = grads.size() > 1 && grads[1].defined();
    at::Tensor grad_hidden, grad_weight;
    if (!has_lp && !has_ent) return {grad_hidden, grad_weight, {}, {}, {}, {}, {}};
    grad_hidden = at::zeros_like(hidden);
    auto grad_weight_f32 = at::zeros(weight.sizes(), weight.options().dtype(at::kFloat));
    const int64_t n = rows.numel();
    const bool fused = use_kernels(hidden);
    auto fp32_rows = [&](bool has, const at::Tensor& g) {
      return has ? g.to(at::kFloat).contiguous() : at::Tensor();
    };
    const auto g_lp_all = fused ? fp32_rows(has_lp, grads[0]) : at::Tensor();
    const auto g_h_all =
        fused ? fp32_rows(has_ent, has_ent ? grads[1] : at::Tensor()) : at::Tensor();
    for (int64_t begin = 0; begin < n; begin += chunk_rows) {
      const int64_t len = std::min(chunk_rows, n - begin);
      auto r = rows.narrow(0, begin, len);
      auto h = hidden.index_select(0, r);
      if (fused) {
        auto g_low = fused_grad_logits(h, weight, targets, lse, has_ent ? ent : at::Tensor(),
                                       g_lp_all, g_h_all, begin, temperature);
        grad_hidden.index_add_(0, r, at::mm(g_low, weight));
        accumulate_grad_weight(grad_weight_f32, g_low, h);
        continue;
      }
      auto t = targets.narrow(0, begin, len).unsqueeze(1);
      auto chunk_lse = lse.narrow(0, begin, len).unsqueeze(1);
      // d/dz of Σ g_lp·log p_t + Σ g_h·H, with log p = z − lse:
      //   g_lp·(onehot(t) − p) − g_h·p·(log p + H), then ÷T for the logits before the temperature.
      auto g = chunk_logits(h, weight, temperature);
      at::Tensor g_rows = at::zeros({len, 1}, g.options());
      if (has_ent) {
        auto g_h = grads[1].narrow(0, begin, len).to(at::kFloat).unsqueeze(1);
        auto log_p = g.sub_(chunk_lse);  // in place: g now holds log p
        auto p = log_p.exp();
        log_p.add_(ent.narrow(0, begin, len).unsqueeze(1)).mul_(p).mul_(-g_h);
        if (has_lp) {
          auto g_lp = grads[0].narrow(0, begin, len).to(at::kFloat).unsqueeze(1);
          g.sub_(p.mul_(g_lp));
          g_rows = g_lp;
        }
      } else {
        auto g_lp = grads[0].narrow(0, begin, len).to(at::kFloat).unsqueeze(1);
        g.sub_(chunk_lse).exp_().mul_(-g_lp);  // in place: −g_lp·p
        g_rows = g_lp;
      }
      if (has_lp) g.scatter_add_(1, t, g_rows);
      if (temperature != 1.0) g.div_(temperature);
      auto g_low = g.to(weight.scalar_type());
      grad_hidden.index_add_(0, r, at::mm(g_low, weight));
      grad_weight_f32.add_(at::mm(g_low.t(), h));
    }
    grad_weight = grad_weight_f32.to(weight.scalar_type());
    return {grad_hidden, grad_weight, {}, {}, {}, {}, {}};
  }
};

}  // namespace

TokenLogProbs linear_token_log_probs(const at::Tensor& hidden, const at::Tensor& weight,
                                     const at::Tensor& rows, const at::Tensor& targets,
                                     double temperature, int64_t chunk_rows, bool with_entropy) {
  if (temperature <= 0) throw Error("temperature must be > 0 to compute log-probs");
  auto all_rows =
      rows.defined() ? rows : at::arange(hidden.size(0), hidden.options().dtype(at::kLong));
  // The kernels read the targets and the saved lse / entropy by raw pointer: contiguous int64.
  auto out = LinearLogProbs::apply(hidden, weight, all_rows.to(hidden.device()),
                                   targets.to(hidden.device(), at::kLong).contiguous(), temperature,
                                   std::max<int64_t>(chunk_rows, 1), with_entropy);
  return {out[0], out.size() > 1 ? out[1] : at::Tensor()};
}

}  // namespace vime::train
