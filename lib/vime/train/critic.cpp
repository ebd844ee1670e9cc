#include "vime/train/critic.hpp"

#include <ATen/ATen.h>
#include <ATen/CPUGeneratorImpl.h>
#include <ATen/core/grad_mode.h>

#include "vime/error.hpp"
#include "vime/train/dp_schedule.hpp"
#include "vime/train/loss.hpp"

namespace vime::train {

Critic::Critic(const Args& args, Model& trunk, GradReducer& reducer, uint64_t seed)
    : args_(args), trunk_(trunk), reducer_(reducer) {
  auto gen = at::make_generator<at::CPUGeneratorImpl>(seed);
  value_head_ = at::normal(0.0, 0.02, {1, trunk.config().hidden_size}, gen,
                           at::TensorOptions().dtype(at::kFloat))
                    .to(trunk.device(), trunk.dtype())
                    .requires_grad_(true);
  auto params = trunk.named_parameters();
  params.emplace_back("value_head.weight", value_head_);
  optimizer_ = std::make_unique<Optimizer>(params, OptimizerConfig::from_args(args),
                                           OptimizerShard{reducer.rank(), reducer.world_size()});
  lr_scheduler_ = std::make_unique<LrScheduler>(LrScheduler::from_args(args));
}

Critic::~Critic() = default;

at::Tensor Critic::values_of(const PackedBatch& packed) {
  return at::linear(trunk_.forward_hidden(packed), value_head_).to(at::kFloat).squeeze(-1);
}

namespace {

std::vector<at::Tensor> split_values(const at::Tensor& values, const TrainBatch& batch,
                                     const MicroBatch& mb) {
  std::vector<at::Tensor> out;
  int64_t start = 0;
  for (auto s : mb) {
    const auto total = static_cast<int64_t>(batch.tokens[s].size());
    out.push_back(response_values(values.narrow(0, start, total).unsqueeze(-1), total,
                                  batch.response_lengths[s]));
    start += total;
  }
  return out;
}

std::vector<int64_t> lengths_of(const TrainBatch& batch) {
  std::vector<int64_t> lengths;
  for (const auto& t : batch.tokens) lengths.push_back(static_cast<int64_t>(t.size()));
  return lengths;
}

PackedBatch pack(const TrainBatch& batch, const MicroBatch& mb, const at::Device& device) {
  std::vector<std::vector<int64_t>> sequences;
  for (auto s : mb) sequences.push_back(batch.tokens[s]);
  return PackedBatch::pack(sequences, device);
}

}  // namespace

std::vector<at::Tensor> Critic::compute_values(const TrainBatch& batch) {
  at::NoGradGuard no_grad;
  std::vector<int64_t> all(batch.size());
  for (size_t i = 0; i < all.size(); ++i) all[i] = static_cast<int64_t>(i);
  const int64_t max_tokens = args_.get_optional_int("max_tokens_per_gpu").value_or(1 << 30);
  std::vector<at::Tensor> out(batch.size());
  for (const auto& mb : first_fit(all, lengths_of(batch), max_tokens)) {
    auto values = split_values(values_of(pack(batch, mb, trunk_.device())), batch, mb);
    for (size_t i = 0; i < mb.size(); ++i) out[mb[i]] = values[i];
  }
  return out;
}

Metrics Critic::train(const TrainBatch& batch, const std::vector<at::Tensor>& old_values,
                      const std::vector<at::Tensor>& returns) {
  if (old_values.size() != batch.size() || returns.size() != batch.size()) {
    throw Error("critic: old values and returns are needed for every sample");
  }
  DpScheduleConfig schedule;
  schedule.dp_size = reducer_.world_size();
  schedule.global_batch_size =
      args_.get_optional_int("global_batch_size").value_or(static_cast<int64_t>(batch.size()));
  if (args_.get_bool("use_dynamic_batch_size") && args_.is_set("max_tokens_per_gpu")) {
    schedule.max_tokens_per_gpu = args_.get_int("max_tokens_per_gpu");
  }
  schedule.micro_batch_size = args_.get_int("micro_batch_size");
  const double value_clip = args_.get_double("value_clip");
  const auto dp = static_cast<double>(reducer_.world_size());
  Metrics totals;
  auto plans = plan_steps(lengths_of(batch), batch.rollout_ids, schedule);
  for (const auto& plan : plans) {
    optimizer_->zero_grad();
    const double scale = dp / static_cast<double>(plan.samples.size());
    double loss_sum = 0, clipfrac_sum = 0;
    for (const auto& mb : plan.per_rank[reducer_.rank()]) {
      auto values = at::cat(split_values(values_of(pack(batch, mb, trunk_.device())), batch, mb));
      std::vector<at::Tensor> masks, old_parts, return_parts;
      std::vector<int64_t> responses;
      for (auto s : mb) {
        masks.push_back(s < static_cast<int64_t>(batch.loss_masks.size()) &&
                                !batch.loss_masks[s].empty()
                            ? at::tensor(batch.loss_masks[s]).to(trunk_.device())
                            : at::ones({batch.response_lengths[s]},
                                       at::TensorOptions().device(trunk_.device())));
        old_parts.push_back(old_values[s]);
        return_parts.push_back(returns[s].to(trunk_.device()));
        responses.push_back(batch.response_lengths[s]);
      }
      auto ssm =
          sum_of_sample_mean(responses, masks, {}, args_.get_bool("calculate_per_token_loss"));
      auto out = value_loss(values, at::cat(old_parts), at::cat(return_parts), value_clip);
      auto loss = ssm(out.loss);
      (loss * scale).backward();
      optimizer_->accumulate_grads();
      loss_sum += loss.item<double>() * scale / dp;
      clipfrac_sum += ssm(out.clipfrac).item<double>() * scale / dp;
    }
    auto grads = optimizer_->main_grads();
    reducer_.all_reduce_mean(grads);
    auto result = optimizer_->step(lr_scheduler_->lr());
    lr_scheduler_->step();
    totals["critic/value_loss"] += reducer_.all_reduce_sum(loss_sum);
    totals["critic/value_clipfrac"] += reducer_.all_reduce_sum(clipfrac_sum);
    totals["critic/grad_norm"] = result.grad_norm;
  }
  for (auto& [name, value] : totals) {
    if (name != "critic/grad_norm") value /= static_cast<double>(std::max<size_t>(plans.size(), 1));
  }
  return totals;
}

}  // namespace vime::train
