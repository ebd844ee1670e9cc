#include "vime/train/advantages.hpp"

#include <ATen/ATen.h>

#include <cmath>
#include <numeric>

#include "vime/error.hpp"
#include "vime/train/loss.hpp"

namespace vime::train {

at::Tensor discounted_returns(const at::Tensor& rewards, double gamma, int64_t chunk) {
  auto r = rewards.dim() == 1 ? rewards.unsqueeze(0) : rewards;  // [B, T]
  r = r.to(at::kDouble);
  const int64_t length = r.size(1);
  auto out = at::zeros_like(r);
  auto carry = at::zeros({r.size(0)}, r.options());  // G at the start of the chunk to the right
  for (int64_t end = length; end > 0; end -= chunk) {
    const int64_t begin = std::max<int64_t>(0, end - chunk), len = end - begin;
    // M[i][j] = γ^(j−i) for j ≥ i: G_i = Σ_j M[i][j]·r_j + γ^(len−i)·carry.
    auto idx = at::arange(len, r.options());
    auto diff = idx.unsqueeze(0) - idx.unsqueeze(1);  // [len, len], j − i
    auto powers = at::where(diff >= 0, at::pow(gamma, diff.clamp_min(0)), at::zeros_like(diff));
    auto tail = at::pow(gamma, len - idx);  // [len]
    auto g = at::matmul(r.narrow(1, begin, len), powers.t()) + carry.unsqueeze(1) * tail;
    out.narrow(1, begin, len).copy_(g);
    carry = g.select(1, 0);
  }
  out = out.to(rewards.scalar_type());
  return rewards.dim() == 1 ? out.squeeze(0) : out;
}

at::Tensor discounted_returns_serial(const at::Tensor& rewards, double gamma) {
  auto r = rewards.to(at::kDouble).contiguous();
  auto out = at::zeros_like(r);
  const int64_t length = r.size(-1);
  at::Tensor running = at::zeros_like(r.select(-1, 0));
  for (int64_t t = length - 1; t >= 0; --t) {
    running = r.select(-1, t) + gamma * running;
    out.select(-1, t).copy_(running);
  }
  return out.to(rewards.scalar_type());
}

namespace {

at::Tensor td_errors(const at::Tensor& rewards, const at::Tensor& values, double gamma) {
  auto next_values =
      at::cat({values.narrow(0, 1, values.size(0) - 1), at::zeros({1}, values.options())});
  return rewards + gamma * next_values - values;
}

}  // namespace

AdvantagesAndReturns gae(const at::Tensor& rewards, const at::Tensor& values, double gamma,
                         double lambda) {
  if (rewards.numel() == 0) return {rewards, rewards};
  auto advantages = discounted_returns(td_errors(rewards, values, gamma), gamma * lambda);
  return {advantages, advantages + values};
}

AdvantagesAndReturns gae_serial(const at::Tensor& rewards, const at::Tensor& values, double gamma,
                                double lambda) {
  if (rewards.numel() == 0) return {rewards, rewards};
  auto advantages = discounted_returns_serial(td_errors(rewards, values, gamma), gamma * lambda);
  return {advantages, advantages + values};
}

AdvantagesAndReturns ppo_advantages(const at::Tensor& kl, const at::Tensor& values, double reward,
                                    double kl_coef, double gamma, double lambda) {
  auto rewards = -kl_coef * kl.to(at::kFloat);
  if (rewards.numel() > 0) rewards[-1] += reward;
  return gae(rewards, values.to(at::kFloat), gamma, lambda);
}

AdvantagesAndReturns reinforce_plus_plus(const at::Tensor& kl, const at::Tensor& loss_mask,
                                         double reward, double kl_coef, double gamma) {
  auto mask = loss_mask.to(at::kFloat);
  auto rewards = -kl_coef * kl.to(at::kFloat) * mask;
  auto masked = at::nonzero(mask > 0);
  if (masked.size(0) > 0) rewards[masked[-1][0].item<int64_t>()] += reward;
  auto returns = discounted_returns(rewards, gamma);
  return {returns, returns};
}

AdvantagesAndReturns reinforce_plus_plus_baseline(const at::Tensor& kl, double centred_reward,
                                                  double kl_coef) {
  auto a = centred_reward - kl_coef * kl.to(at::kFloat);
  return {a, a};
}

std::vector<at::Tensor> whiten_advantages(const std::vector<at::Tensor>& advantages,
                                          const std::vector<at::Tensor>& loss_masks) {
  if (advantages.empty()) return {};
  auto a = at::cat(advantages).to(at::kDouble);
  auto m = at::cat(loss_masks).to(at::kDouble);
  const double count = m.sum().item<double>();
  if (count < 2) return advantages;
  const double mean = (a * m).sum().item<double>() / count;
  double var = ((a * a * m).sum().item<double>() / count - mean * mean) * count / (count - 1);
  auto whitened = ((a - mean) / std::sqrt(var + 1e-8)).to(advantages[0].scalar_type());
  std::vector<at::Tensor> out;
  int64_t start = 0;
  for (const auto& adv : advantages) {
    out.push_back(whitened.narrow(0, start, adv.numel()));
    start += adv.numel();
  }
  return out;
}

namespace {

// -kl_coef·KL(old || ref) enters the reward of ppo and reinforce++ only; elsewhere the KL is 0.
at::Tensor reward_kl(const AdvantageOptions& options, const RolloutTensors& data, size_t i) {
  if (options.has_kl_in_reward() && !data.ref_log_probs.empty()) {
    const auto& old = data.log_probs.empty() ? data.ref_log_probs[i] : data.log_probs[i];
    return approx_kl(old, data.ref_log_probs[i], options.kl_type);
  }
  return at::zeros({data.response_lengths[i]}, data.loss_masks[i].options());
}

AdvantagesAndReturns estimate(const AdvantageOptions& options, const RolloutTensors& data,
                              size_t i) {
  const double reward = data.rewards[i];
  switch (options.estimator) {
    case AdvantageEstimator::kGrpo:
    case AdvantageEstimator::kGspo:
    case AdvantageEstimator::kCispo: {
      auto a = at::full({data.response_lengths[i]}, reward, data.loss_masks[i].options());
      return {a, a};
    }
    case AdvantageEstimator::kReinforcePlusPlus:
      return reinforce_plus_plus(reward_kl(options, data, i), data.loss_masks[i], reward,
                                 options.kl_coef, options.gamma);
    case AdvantageEstimator::kReinforcePlusPlusBaseline:
      return reinforce_plus_plus_baseline(reward_kl(options, data, i), reward, options.kl_coef);
    case AdvantageEstimator::kPpo:
      return ppo_advantages(reward_kl(options, data, i), data.values[i], reward, options.kl_coef,
                            options.gamma, options.lambd);
  }
  throw Error("unknown advantage estimator");
}

void estimate_all(const AdvantageOptions& options, RolloutTensors& data) {
  const size_t n = data.size();
  if (data.rewards.size() != n) {
    throw Error("train data: the policy loss needs one reward per sample");
  }
  if (options.estimator == AdvantageEstimator::kPpo && data.values.size() != n) {
    throw Error("--advantage-estimator ppo needs critic values in the train data");
  }
  for (size_t i = 0; i < n; ++i) {
    auto ar = estimate(options, data, i);
    data.advantages.push_back(ar.advantages.to(at::kFloat));
    data.returns.push_back(ar.returns.to(at::kFloat));
  }
}

// slime's rollout_data["kl"], which compute_advantages_and_returns fills before the estimator:
// KL(old || ref) per token with a non-zero --kl-coef, else zeros.
std::vector<at::Tensor> per_token_kl(const AdvantageOptions& options, const RolloutTensors& data) {
  std::vector<at::Tensor> kl;
  const bool has_kl = options.kl_coef != 0 && data.ref_log_probs.size() == data.size() &&
                      data.log_probs.size() == data.size();
  for (size_t i = 0; i < data.size(); ++i) {
    kl.push_back(has_kl ? approx_kl(data.log_probs[i], data.ref_log_probs[i], options.kl_type)
                        : at::zeros({data.response_lengths[i]}, data.loss_masks[i].options()));
  }
  return kl;
}

void run_custom_advantage(const TrainContext& ctx, RolloutTensors& data) {
  const auto& plugin = ctx.plugins.custom_advantage;
  RolloutData rd = data.to_rollout_data();
  rd["kl"] = per_token_kl(ctx.options.advantages, data);
  plugin(ctx.args, rd);
  if (rd["advantages"].size() != data.size()) {
    throw Error(plugin.description() + " must set one \"advantages\" per sample");
  }
  data.advantages = rd["advantages"];
  data.returns = rd.count("returns") ? rd["returns"] : rd["advantages"];
}

// On-policy distillation: the advantage of each token loses opd_kl_coef times the student's excess
// log-prob over the teacher's (the old policy's log-probs, at the rollout temperature).
void apply_opd(const AdvantageOptions& options, RolloutTensors& data) {
  if (data.teacher_log_probs.size() != data.size()) {
    throw Error(
        "--use-opd: the train data has no teacher log-probs (--opd-type megatron computes them "
        "from --opd-teacher-load; --opd-type vllm asks the served --opd-teacher-model; without "
        "it a rollout plugin sets Sample.teacher_log_probs, as slime's "
        "on_policy_distillation.post_process_rewards does)");
  }
  if (data.log_probs.size() != data.size()) {
    throw Error("--use-opd needs the student's log-probs of the train data");
  }
  data.opd_reverse_kl.clear();
  for (size_t i = 0; i < data.size(); ++i) {
    const auto& teacher = data.teacher_log_probs[i];
    auto reverse_kl = data.log_probs[i].to(teacher.device()) - teacher;
    data.advantages[i] = data.advantages[i] - options.opd_kl_coef * reverse_kl;
    data.opd_reverse_kl.push_back(std::move(reverse_kl));
  }
}

}  // namespace

void compute_advantages_and_returns(const TrainContext& ctx, RolloutTensors& data) {
  const auto& options = ctx.options.advantages;
  data.advantages.clear();
  data.returns.clear();
  if (ctx.plugins.custom_advantage) {
    run_custom_advantage(ctx, data);
  } else {
    estimate_all(options, data);
  }
  if (options.use_opd) apply_opd(options, data);
  if (options.normalize_advantages) {
    data.advantages = whiten_advantages(data.advantages, data.loss_masks);
  }
}

}  // namespace vime::train
