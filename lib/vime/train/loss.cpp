#include "vime/train/loss.hpp"

#include <ATen/ATen.h>

#include "vime/error.hpp"

namespace vime::train {

PerTokenLoss ppo_policy_loss(const at::Tensor& ppo_kl, const at::Tensor& advantages,
                             double eps_clip, double eps_clip_high,
                             std::optional<double> eps_clip_c) {
  auto ratio = (-ppo_kl).exp();
  auto loss1 = -ratio * advantages;
  auto loss2 = -ratio.clamp(1 - eps_clip, 1 + eps_clip_high) * advantages;
  auto clipped = at::maximum(loss1, loss2);
  PerTokenLoss out{clipped, at::gt(loss2, loss1).to(at::kFloat)};
  if (eps_clip_c.has_value()) {
    if (*eps_clip_c <= 1.0) throw UsageError("--eps-clip-c must be > 1 (dual clip)");
    auto loss3 = -*eps_clip_c * advantages;
    out.loss = at::where(advantages < 0, at::minimum(loss3, clipped), clipped);
  }
  return out;
}

PerTokenLoss cispo_loss(const at::Tensor& ppo_kl, const at::Tensor& log_probs,
                        const at::Tensor& advantages, double eps_clip, double eps_clip_high) {
  auto ratio = (-ppo_kl).exp();
  auto truncated = ratio.clamp(1 - eps_clip, 1 + eps_clip_high);
  return {-truncated.detach() * advantages * log_probs, at::ne(truncated, ratio).to(at::kFloat)};
}

at::Tensor sequence_mean_kl(const at::Tensor& ppo_kl, const std::vector<at::Tensor>& loss_masks) {
  std::vector<at::Tensor> parts;
  int64_t start = 0;
  for (const auto& m : loss_masks) {
    auto kl = ppo_kl.narrow(0, start, m.numel());
    auto s = (kl * m).sum() / m.sum().clamp_min(1);
    parts.push_back(s.expand({m.numel()}));
    start += m.numel();
  }
  return parts.empty() ? ppo_kl : at::cat(parts);
}

at::Tensor opsm_mask(const at::Tensor& advantages, const at::Tensor& sequence_kl, double delta) {
  return at::logical_not(at::logical_and(advantages<0, sequence_kl> delta)).to(at::kFloat);
}

at::Tensor approx_kl(const at::Tensor& log_probs, const at::Tensor& base_log_probs, KlType type) {
  auto delta = log_probs.to(at::kFloat) - base_log_probs.to(at::kFloat);
  switch (type) {
    case KlType::kK1:
      return delta;
    case KlType::kK2:
      return delta.pow(2) / 2;
    case KlType::kK3:
      return (-delta).exp() - 1 + delta;
    case KlType::kLowVarKl:
      return ((-delta).exp() - 1 + delta).clamp(-10, 10);
  }
  return delta;
}

namespace {

std::vector<at::Tensor> split_like(const at::Tensor& flat, const std::vector<at::Tensor>& like) {
  std::vector<at::Tensor> out;
  int64_t start = 0;
  for (const auto& t : like) {
    out.push_back(flat.narrow(0, start, t.numel()));
    start += t.numel();
  }
  return out;
}

}  // namespace

TisOutput vanilla_tis(const TisInputs& in, double clip_low, double clip_high) {
  auto old_lp = at::cat(in.train_log_probs).to(at::kFloat);
  auto rollout_lp = at::cat(in.rollout_log_probs).to(at::kFloat);
  auto tis = (old_lp - rollout_lp).exp();
  auto weights = tis.clamp(clip_low, clip_high);
  TisOutput out;
  out.pg_loss = in.pg_loss * weights;
  out.loss_masks = in.loss_masks;
  out.metrics["tis"] = split_like(tis, in.loss_masks);
  out.metrics["tis_clipfrac"] = split_like(at::ne(weights, tis).to(at::kFloat), in.loss_masks);
  out.metrics["tis_abs"] = split_like((tis - 1).abs(), in.loss_masks);
  return out;
}

TisOutput icepop_tis(const TisInputs& in, double low, double high) {
  auto old_lp = at::cat(in.train_log_probs).to(at::kFloat);
  auto rollout_lp = at::cat(in.rollout_log_probs).to(at::kFloat);
  auto ratio = (old_lp - rollout_lp).exp();
  auto inside = at::logical_and(ratio >= low, ratio <= high);
  auto weights = at::where(inside, ratio, at::zeros_like(ratio));
  TisOutput out;
  out.pg_loss = in.pg_loss * weights;
  out.loss_masks = in.loss_masks;
  // slime's icepop_function reports under the TIS names.
  out.metrics["tis"] = split_like(ratio, in.loss_masks);
  out.metrics["tis_abs"] = split_like((ratio - 1).abs(), in.loss_masks);
  out.metrics["tis_clipfrac"] = split_like(at::logical_not(inside).to(at::kFloat), in.loss_masks);
  return out;
}

PerTokenLoss value_loss(const at::Tensor& values, const at::Tensor& old_values,
                        const at::Tensor& returns, double value_clip) {
  auto clipped = old_values + (values - old_values).clamp(-value_clip, value_clip);
  auto loss = at::maximum((clipped - returns).pow(2), (values - returns).pow(2));
  return {loss, ((values - old_values).abs() > value_clip).to(at::kFloat)};
}

at::Tensor response_values(const at::Tensor& value_head_out, int64_t total_length,
                           int64_t response_length) {
  return value_head_out.narrow(0, total_length - response_length - 1, response_length).squeeze(-1);
}

SumOfSampleMean sum_of_sample_mean(const std::vector<int64_t>& response_lengths,
                                   const std::vector<at::Tensor>& loss_masks,
                                   const std::vector<double>& rollout_mask_sums,
                                   bool calculate_per_token_loss) {
  if (loss_masks.size() != response_lengths.size()) {
    throw Error("sum_of_sample_mean: one loss mask per sample is needed");
  }
  std::vector<at::Tensor> weights;  // m / max(Σm, 1) per sample, or m
  for (size_t i = 0; i < loss_masks.size(); ++i) {
    auto m = loss_masks[i].to(at::kFloat);
    if (calculate_per_token_loss) {
      weights.push_back(m);
    } else {
      double denom = i < rollout_mask_sums.size() ? rollout_mask_sums[i] : m.sum().item<double>();
      weights.push_back(m / std::max(denom, 1.0));
    }
  }
  auto w = weights.empty() ? at::zeros({0}) : at::cat(weights);
  return [w](const at::Tensor& x) { return (x * w.to(x.device())).sum(); };
}

SumOfSampleMean sum_of_sample_mean(const LossBatch& batch, bool calculate_per_token_loss) {
  return sum_of_sample_mean(batch.response_lengths, batch.split(batch.loss_masks),
                            batch.rollout_mask_sums, calculate_per_token_loss);
}

namespace {

using MetricTensors = std::map<std::string, at::Tensor>;

// --use-tis or --get-mismatch-metrics (slime calls the TIS function for either): pg_loss
// reweighted by --custom-tis-function-path, else by the vanilla TIS; its per-token metrics go into
// `metrics`. When the function narrowed the loss masks (rejection sampling), `ssm` becomes the
// reducer over the new masks, as slime rebuilds sum_of_sample_mean.
at::Tensor apply_tis(const TrainContext& ctx, const LossBatch& batch, const at::Tensor& old,
                     const at::Tensor& pg_loss, SumOfSampleMean& ssm, MetricTensors& metrics) {
  TisInputs in;
  in.pg_loss = pg_loss;
  in.train_log_probs = batch.split(old.detach());
  in.rollout_log_probs = batch.split(batch.rollout_log_probs);
  in.loss_masks = batch.split(batch.loss_masks);
  in.total_lengths = batch.total_lengths;
  in.response_lengths = batch.response_lengths;
  const auto& o = ctx.options.policy_loss;
  auto tis = ctx.plugins.custom_tis ? ctx.plugins.custom_tis(ctx.args, in)
                                    : vanilla_tis(in, o.tis_clip_low, o.tis_clip);
  if (tis.loss_masks.size() == in.loss_masks.size()) {
    bool changed = false;
    for (size_t i = 0; i < in.loss_masks.size() && !changed; ++i)
      changed = !tis.loss_masks[i].is_same(in.loss_masks[i]);
    if (changed) {
      ssm = sum_of_sample_mean(batch.response_lengths, tis.loss_masks, {},
                               ctx.options.calculate_per_token_loss);
    }
  }
  for (auto& [name, parts] : tis.metrics) metrics[name] = ssm(at::cat(parts));
  return tis.pg_loss;
}

// --use-kl-loss: KL(actor || ref) per token, weighted by the actor/old ratio when unbiased.
at::Tensor kl_loss_per_token(const PolicyLossOptions& o, const at::Tensor& log_probs,
                             const at::Tensor& old, const at::Tensor& ref_log_probs) {
  auto kl = approx_kl(log_probs, ref_log_probs, o.kl_loss_type);
  if (o.use_unbiased_kl) kl = kl * (log_probs - old).exp();
  return kl;
}

}  // namespace

LossOutput policy_loss_function(const TrainContext& ctx, const LossBatch& batch,
                                const ForwardOutput& forward, SumOfSampleMean ssm) {
  const auto& o = ctx.options.policy_loss;
  const auto& lp = forward.response.log_probs;
  const auto old = batch.log_probs.defined() ? batch.log_probs : lp.detach();
  const auto& adv = batch.advantages;
  const auto masks = batch.split(batch.loss_masks);
  auto ppo_kl = old - lp;
  auto kl_for_clip = o.use_sequence_kl ? sequence_mean_kl(ppo_kl, masks) : ppo_kl;
  PerTokenLoss pg =
      o.use_cispo ? cispo_loss(kl_for_clip, lp, adv, o.eps_clip, o.eps_clip_high)
                  : ppo_policy_loss(kl_for_clip, adv, o.eps_clip, o.eps_clip_high, o.eps_clip_c);
  auto pg_loss = pg.loss;
  MetricTensors metrics;
  if (o.use_opsm) {
    pg_loss = pg_loss * opsm_mask(adv, sequence_mean_kl(ppo_kl.detach(), masks), o.opsm_delta);
  }
  if (o.use_tis || ctx.options.get_mismatch_metrics)
    pg_loss = apply_tis(ctx, batch, old, pg_loss, ssm, metrics);
  const auto& reducer = ctx.plugins.custom_pg_loss_reducer;
  SumOfSampleMean pg_reducer = reducer ? reducer(batch.total_lengths, batch.response_lengths, masks,
                                                 ctx.options.calculate_per_token_loss)
                                       : ssm;
  auto pg_value = pg_reducer(pg_loss);
  // Without an entropy bonus the entropy is a metric only: no gradient through it.
  auto entropy_value =
      ssm(o.entropy_coef != 0 ? forward.response.entropy : forward.response.entropy.detach());
  auto loss = o.entropy_coef != 0 ? pg_value - o.entropy_coef * entropy_value : pg_value;
  metrics["pg_loss"] = pg_value;
  metrics["entropy_loss"] = entropy_value;
  metrics["pg_clipfrac"] = ssm(pg.clipfrac);
  metrics["ppo_kl"] = ssm(ppo_kl);
  if (batch.rollout_log_probs.defined()) {
    metrics["train_rollout_logprob_abs_diff"] = ssm((lp.detach() - batch.rollout_log_probs).abs());
  }
  if (o.use_kl_loss) {
    auto kl_value = ssm(kl_loss_per_token(o, lp, old, batch.ref_log_probs));
    loss = loss + o.kl_loss_coef * kl_value;
    metrics["kl_loss"] = kl_value;
  }
  metrics["loss"] = loss;
  return {loss, std::move(metrics)};
}

LossOutput sft_loss_function(const ForwardOutput& forward, const SumOfSampleMean& ssm) {
  auto loss = -ssm(forward.response.log_probs);
  return {loss, {{"loss", loss}}};
}

LossOutput custom_loss_function(const TrainContext& ctx, const LossBatch& batch,
                                const ForwardOutput& forward, const SumOfSampleMean& ssm) {
  auto out = ctx.plugins.custom_loss(ctx.args, batch.to_rollout_data(), forward.logits, ssm);
  out.metrics["loss"] = out.loss;
  return out;
}

LossOutput loss_function(const TrainContext& ctx, const LossBatch& batch,
                         const ForwardOutput& forward, const SumOfSampleMean& ssm) {
  switch (ctx.options.loss_type) {
    case LossType::kSftLoss:
      return sft_loss_function(forward, ssm);
    case LossType::kCustomLoss:
      return custom_loss_function(ctx, batch, forward, ssm);
    case LossType::kPolicyLoss:
      break;
  }
  return policy_loss_function(ctx, batch, forward, ssm);
}

LossOutput value_loss_function(double value_clip, const LossBatch& batch, const at::Tensor& values,
                               const SumOfSampleMean& ssm) {
  auto out = value_loss(values, batch.values, batch.returns, value_clip);
  auto loss = ssm(out.loss);
  return {loss, {{"value_loss", loss}, {"value_clipfrac", ssm(out.clipfrac)}}};
}

}  // namespace vime::train
