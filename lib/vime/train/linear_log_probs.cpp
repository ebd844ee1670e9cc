#include "vime/train/linear_log_probs.hpp"

#include <ATen/ATen.h>
#include <torch/csrc/autograd/custom_function.h>

#include <algorithm>

#include "vime/error.hpp"

namespace vime::train {
namespace {

using torch::autograd::AutogradContext;
using torch::autograd::variable_list;

// One chunk's logits in fp32 at temperature T: [n, vocab].
at::Tensor chunk_logits(const at::Tensor& hidden_rows, const at::Tensor& weight,
                        double temperature) {
  auto z = at::mm(hidden_rows, weight.t()).to(at::kFloat);
  if (temperature != 1.0) z.div_(temperature);
  return z;
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
    for (int64_t begin = 0; begin < n; begin += chunk_rows) {
      const int64_t len = std::min(chunk_rows, n - begin);
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
    for (int64_t begin = 0; begin < n; begin += chunk_rows) {
      const int64_t len = std::min(chunk_rows, n - begin);
      auto r = rows.narrow(0, begin, len);
      auto t = targets.narrow(0, begin, len).unsqueeze(1);
      auto h = hidden.index_select(0, r);
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
  auto out = LinearLogProbs::apply(hidden, weight, all_rows.to(hidden.device()),
                                   targets.to(hidden.device()), temperature,
                                   std::max<int64_t>(chunk_rows, 1), with_entropy);
  return {out[0], out.size() > 1 ? out[1] : at::Tensor()};
}

}  // namespace vime::train
