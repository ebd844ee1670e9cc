#include "vime/train/optimizer.hpp"

#include <ATen/ATen.h>
#include <ATen/core/grad_mode.h>

#include <cmath>
#include <map>

#include "vime/error.hpp"

namespace vime {

OptimizerConfig OptimizerConfig::from_args(const Args& args) {
  if (args.has("optimizer") && args.get_string("optimizer") != "adam") {
    throw UsageError("--optimizer " + args.get_string("optimizer") +
                     ": vime trains with adam (AdamW) only");
  }
  OptimizerConfig c;
  c.beta1 = args.get_double("adam_beta1");
  c.beta2 = args.get_double("adam_beta2");
  c.eps = args.get_double("adam_eps");
  c.weight_decay = args.get_double("weight_decay");
  c.clip_grad = args.get_double("clip_grad");
  return c;
}

Optimizer::Optimizer(const NamedTensorList& parameters, OptimizerConfig config,
                     OptimizerShard shard)
    : config_(config) {
  const auto n = static_cast<int64_t>(parameters.size());
  for (int64_t i = 0; i < n; ++i) {
    const auto& [name, param] = parameters[i];
    Slot s;
    s.name = name;
    s.param = param;
    // Contiguous blocks of parameters per rank, in order.
    s.is_owned = i * shard.world_size / std::max<int64_t>(n, 1) == shard.rank;
    s.has_weight_decay = param.dim() > 1 && !name.ends_with(".bias");
    s.main_grad = at::zeros(param.sizes(), param.options().dtype(at::kFloat));
    if (s.is_owned) {
      s.master = param.scalar_type() == at::kFloat ? param : param.detach().to(at::kFloat);
      s.exp_avg = at::zeros_like(s.main_grad);
      s.exp_avg_sq = at::zeros_like(s.main_grad);
    }
    slots_.push_back(std::move(s));
  }
}

void Optimizer::sync_masters_from_params() {
  at::NoGradGuard no_grad;
  for (auto& s : slots_) {
    if (s.is_owned && !s.master.is_same(s.param)) s.master.copy_(s.param);
  }
}

void Optimizer::accumulate_grads() {
  for (auto& s : slots_) {
    if (!s.param.grad().defined()) continue;
    s.main_grad.add_(s.param.grad().to(at::kFloat));
    s.param.mutable_grad() = at::Tensor();
  }
}

std::vector<at::Tensor> Optimizer::main_grads() const {
  std::vector<at::Tensor> out;
  for (const auto& s : slots_) out.push_back(s.main_grad);
  return out;
}

void Optimizer::zero_grad() {
  for (auto& s : slots_) {
    s.main_grad.zero_();
    s.param.mutable_grad() = at::Tensor();
  }
}

StepResult Optimizer::step(double lr) {
  at::NoGradGuard no_grad;
  StepResult result;
  at::Tensor sum_sq;
  for (const auto& s : slots_) {
    auto sq = s.main_grad.pow(2).sum().to(at::kDouble);
    sum_sq = sum_sq.defined() ? sum_sq + sq : sq;
  }
  result.grad_norm = sum_sq.defined() ? std::sqrt(sum_sq.item<double>()) : 0.0;
  if (!std::isfinite(result.grad_norm)) {
    zero_grad();
    return result;
  }
  double clip = 1.0;
  if (config_.clip_grad > 0) {
    const double coeff = config_.clip_grad / (result.grad_norm + 1e-6);
    if (coeff < 1.0) clip = coeff;
  }
  ++num_steps_;
  const double bias1 = 1 - std::pow(config_.beta1, static_cast<double>(num_steps_));
  const double bias2 = 1 - std::pow(config_.beta2, static_cast<double>(num_steps_));
  for (auto& s : slots_) {
    if (s.is_owned) {
      auto g = clip == 1.0 ? s.main_grad : s.main_grad * clip;
      s.exp_avg.mul_(config_.beta1).add_(g, 1 - config_.beta1);
      s.exp_avg_sq.mul_(config_.beta2).addcmul_(g, g, 1 - config_.beta2);
      auto denom = (s.exp_avg_sq / bias2).sqrt_().add_(config_.eps);
      if (s.has_weight_decay && config_.weight_decay != 0) {
        s.master.mul_(1 - lr * config_.weight_decay);
      }
      s.master.addcdiv_(s.exp_avg, denom, -lr / bias1);
      if (!s.master.is_same(s.param)) s.param.copy_(s.master);
    }
    s.main_grad.zero_();
  }
  result.is_updated = true;
  return result;
}

NamedTensorList Optimizer::state_tensors() const {
  NamedTensorList out;
  for (const auto& s : slots_) {
    if (!s.is_owned) continue;
    out.emplace_back("exp_avg." + s.name, s.exp_avg);
    out.emplace_back("exp_avg_sq." + s.name, s.exp_avg_sq);
    if (!s.master.is_same(s.param)) out.emplace_back("master." + s.name, s.master);
  }
  return out;
}

void Optimizer::load_state_tensors(const NamedTensorList& tensors, int64_t num_steps,
                                   const std::string& where) {
  std::map<std::string, const at::Tensor*> by_name;
  for (const auto& [name, t] : tensors) by_name[name] = &t;
  at::NoGradGuard no_grad;
  auto copy = [&](const std::string& key, at::Tensor& dst) {
    auto it = by_name.find(key);
    if (it == by_name.end()) {
      throw Error(where + ": optimizer state \"" + key +
                  "\" is missing (load with --no-load-optim to start the optimizer afresh)");
    }
    if (it->second->sizes() != dst.sizes()) {
      throw Error(where + ": optimizer state \"" + key + "\" has shape " +
                  c10::str(it->second->sizes()) + ", expected " + c10::str(dst.sizes()));
    }
    dst.copy_(*it->second);
  };
  for (auto& s : slots_) {
    if (!s.is_owned) continue;
    copy("exp_avg." + s.name, s.exp_avg);
    copy("exp_avg_sq." + s.name, s.exp_avg_sq);
    if (!s.master.is_same(s.param)) copy("master." + s.name, s.master);
  }
  num_steps_ = num_steps;
}

LrScheduler::LrScheduler(Config config) : config_(std::move(config)) {
  if (config_.decay_style != "constant" && config_.decay_style != "linear" &&
      config_.decay_style != "cosine") {
    throw UsageError("--lr-decay-style " + config_.decay_style +
                     ": vime supports constant, linear and cosine");
  }
}

LrScheduler LrScheduler::from_args(const Args& args) {
  Config c;
  c.max_lr = args.get_double("lr");
  c.min_lr = args.get_double("min_lr");
  c.warmup_init_lr = args.get_double("lr_warmup_init");
  c.decay_style = args.get_string("lr_decay_style");
  const int64_t train_iters = args.get_optional_int("train_iters").value_or(0);
  c.decay_steps = args.get_optional_int("lr_decay_iters").value_or(train_iters);
  if (args.is_set("lr_warmup_iters") && args.get_int("lr_warmup_iters") > 0) {
    c.warmup_steps = args.get_int("lr_warmup_iters");
  } else if (args.is_set("lr_warmup_fraction")) {
    c.warmup_steps = static_cast<int64_t>(args.get_double("lr_warmup_fraction") *
                                          static_cast<double>(c.decay_steps));
  }
  return LrScheduler(c);
}

double LrScheduler::lr_at(int64_t step) const {
  const auto& c = config_;
  if (c.warmup_steps > 0 && step <= c.warmup_steps) {
    return c.warmup_init_lr +
           (c.max_lr - c.warmup_init_lr) * static_cast<double>(step) / double(c.warmup_steps);
  }
  if (c.decay_style == "constant" || c.decay_steps <= c.warmup_steps) return c.max_lr;
  if (step > c.decay_steps) return c.min_lr;
  const double ratio =
      static_cast<double>(step - c.warmup_steps) / double(c.decay_steps - c.warmup_steps);
  const double coeff = c.decay_style == "linear" ? 1.0 - ratio : 0.5 * (std::cos(M_PI * ratio) + 1);
  return c.min_lr + coeff * (c.max_lr - c.min_lr);
}

void Optimizer::reset_states() {
  for (auto& s : slots_) {
    if (!s.is_owned) continue;
    s.exp_avg.zero_();
    s.exp_avg_sq.zero_();
  }
  num_steps_ = 0;
}

}  // namespace vime
